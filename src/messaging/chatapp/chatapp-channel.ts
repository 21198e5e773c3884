import type { OutboxRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';
import type { PartOutcome } from '../carrier-network.js';
import { upstreamMessage, type ChatAppContent } from './chatapp-send.js';
import { UpstreamError, type GraphClient } from './graph-client.js';

/** The carrier name chat-app messages are recorded with, and their upstream ids kept under. */
export const CHATAPP_CARRIER = 'chatapp';

/**
 * Chat-app messages to upstream: the business account that holds the sender number sends it
 * with its own token. Resolves with upstream's message id (wamid) or its refusal.
 */
export class ChatAppChannel {
  constructor(
    private readonly state: State,
    private readonly graph: GraphClient,
    /** How long a message upstream could not take waits before it is tried again. */
    readonly retryMs: number,
  ) {}

  /** Resolves with upstream's answer, or `retry` when upstream could not take it just now. */
  async send(
    entry: OutboxRecord,
    content: ChatAppContent,
  ): Promise<PartOutcome | { retry: string }> {
    const account = await this.state.chatAppAccounts.findByUnique({
      space: 'chatapp_number',
      value: entry.src,
    });
    const phone = account?.phone_numbers.find((p) => p.number === entry.src);
    if (!account || !phone || account.account !== entry.account)
      return refused(`${entry.src} is no longer a number of a connected business account`);
    try {
      const id = await this.graph.sendMessage(
        { accessToken: account.access_token },
        phone.phone_number_id,
        upstreamMessage(entry.dst, content),
      );
      return { ok: true, messageId: id };
    } catch (error) {
      if (error instanceof UpstreamError && error.transient) return { retry: error.message };
      return refused((error as Error).message);
    }
  }
}

function refused(error: string): PartOutcome {
  return { ok: false, commandStatus: null, expired: false, error };
}
