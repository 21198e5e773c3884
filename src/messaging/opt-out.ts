import type { State } from '../state/state.js';

/** wire-compat-messaging.md, Incoming messages: the keywords and the intent they give. */
const OPT_OUT = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const OPT_IN = new Set(['START', 'UNSTOP', 'YES']);
const HELP = new Set(['HELP', 'INFO']);

export type MessageIntent = 'optout' | 'optin' | 'help' | '';

/** The intent of an inbound text: a keyword alone (case, spaces and end punctuation aside). */
export function messageIntent(text: string): MessageIntent {
  const word = text
    .trim()
    .replace(/[.!?]+$/, '')
    .toUpperCase();
  if (OPT_OUT.has(word)) return 'optout';
  if (OPT_IN.has(word)) return 'optin';
  if (HELP.has(word)) return 'help';
  return '';
}

/** The id of an opt-out: the service number and the sender who opted out of it. */
export function optOutId(serviceNumber: string, sender: string): string {
  return `${serviceNumber}:${sender}`;
}

/**
 * Records what an inbound keyword changes: an opt-out stops messages from the service number
 * to the sender until an opt-in keyword. Opt-outs live in the shared state, seen by every node.
 */
export async function applyIntent(
  state: State,
  owner: { account: string; subaccount: string | null },
  serviceNumber: string,
  sender: string,
  intent: MessageIntent,
  keyword: string,
  now: number,
): Promise<void> {
  const id = optOutId(serviceNumber, sender);
  const existing = await state.optOuts.get(owner.account, id);
  if (intent === 'optout' && !existing) {
    await state.optOuts.create({
      account: owner.account,
      subaccount: owner.subaccount,
      created: now,
      id,
      service_number: serviceNumber,
      sender,
      keyword: keyword.trim().toUpperCase(),
    });
  } else if (intent === 'optin' && existing) {
    await state.optOuts.remove(existing);
  }
}
