import { randomHex } from '../core/ids.js';
import type { Scheduler } from '../core/scheduler.js';
import { locateSipServers, type SipDns } from '../sip/dialog/server-locator.js';
import { parseUri, SipRequest } from '../sip/message/index.js';
import { newTag } from '../sip/transaction/response-to.js';
import type { TransactionLayer } from '../sip/transaction/transaction-layer.js';

export interface OptionsProbeDeps {
  transactions: TransactionLayer;
  dns: SipDns;
  scheduler: Scheduler;
  publicHost: string;
  /** The probes' interval (ms): an answer must come within it, and within 5 s at most. */
  intervalMs: number;
}

/**
 * One OPTIONS to the first server RFC 3263 locates for `uri` (a trunk's origination URI, a
 * carrier's gateway): null when it answered (any final response but 503: a 404 or 405 still
 * shows the host is there); otherwise what went wrong.
 */
export async function askOptions(uri: string, deps: OptionsProbeDeps): Promise<string | null> {
  const { transactions, dns, publicHost, scheduler, intervalMs } = deps;
  const [destination] = await locateSipServers(parseUri(uri), dns);
  if (!destination) return `${uri} has no server`;
  const request = new SipRequest({
    method: 'OPTIONS',
    uri,
    headers: [
      ['Max-Forwards', '70'],
      ['From', `<sip:voxgate@${publicHost}>;tag=${newTag()}`],
      ['To', `<${uri}>`],
      ['Call-ID', randomHex(16)],
      ['CSeq', '1 OPTIONS'],
      ['Accept', 'application/sdp'],
    ],
  });
  // An answer must come within the interval (at most 5 s), not Timer F's 32 s.
  const waitMs = Math.min(5000, intervalMs > 0 ? intervalMs : 5000);
  return new Promise((resolve) => {
    const timer = scheduler.after(waitMs, () => resolve(`no answer to OPTIONS in ${waitMs} ms`));
    const done = (result: string | null) => {
      timer.cancel();
      resolve(result);
    };
    try {
      transactions.request(request, destination, {
        onResponse: (response) => {
          if (response.status < 200) return;
          done(response.status === 503 ? `OPTIONS answered 503` : null);
        },
        onTimeout: () => done('no answer to OPTIONS'),
        onTransportError: (error) => done(`cannot reach ${uri}: ${error.message}`),
      });
    } catch (error) {
      done(`cannot send OPTIONS to ${uri}: ${(error as Error).message}`);
    }
  });
}
