import { countryOf } from '../core/phone-number.js';
import type { OutboxRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import { isTollFree } from '../tollfree/verification-rules.js';

/**
 * Carriers refuse messages from a toll-free number to US and Canadian numbers unless its
 * verification is APPROVED: such a message fails here, before any carrier sees it.
 */
export async function tollFreeRefusal(
  state: State,
  entry: OutboxRecord,
): Promise<{ code: string; reason: string } | null> {
  if (!isTollFree(entry.src)) return null;
  const country = countryOf(entry.dst);
  if (country !== 'US' && country !== 'CA') return null;
  const requests = await state.tollfreeVerifications.all(entry.account, `number:${entry.src}`);
  if (requests.some((r) => r.status === 'APPROVED')) return null;
  const latest = requests.sort((a, b) => b.created - a.created)[0];
  const status = latest ? `its verification is ${latest.status}` : 'it has no verification request';
  return country === 'CA'
    ? {
        code: '201',
        reason: `toll-free ${entry.src} to a Canadian destination is blocked until its verification is APPROVED (${status})`,
      }
    : {
        code: '100',
        reason: `toll-free ${entry.src} is not verified (${status}): carriers refuse its messages to US and Canadian numbers`,
      };
}
