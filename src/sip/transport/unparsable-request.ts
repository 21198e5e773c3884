import {
  type SipHeaders,
  SipParseError,
  SipResponse,
  parseViaList,
  rejectionStatus,
} from '../message/index.js';
import type { Flow } from './flow.js';
import { responseDestination, type ResponseRoute } from './response-destination.js';

const REASONS: Readonly<Record<number, string>> = {
  505: 'Version Not Supported',
  513: 'Message Too Large',
  416: 'Unsupported URI Scheme',
};

/**
 * The answer to a request that could not be parsed or failed its checks: 400 with the fault
 * as its reason (or 505, 513, 416), built from the rows that could be read (RFC 3261 8.2.6.2
 * copies Via, From, To, Call-ID and CSeq). Null when nothing may or can be answered.
 *
 * Over UDP the source address may be forged, so the answer must not make this port an
 * amplifier: it is never larger than the request (`requestBytes`). When the fault's reason
 * would make it so the status's own short reason is used, and if that is still too large
 * (the request used compact header names, say) nothing is sent.
 */
export function rejectUnparsable(
  error: SipParseError,
  flow: Flow,
  /** The rows of a message that parsed but failed its checks. */
  parsed: SipHeaders | undefined,
  requestBytes: number,
): { route: ResponseRoute; data: Buffer } | null {
  const status = rejectionStatus(error);
  const headers = error.partial?.headers ?? parsed;
  if (status === null || !headers) return null;
  const datagram = flow.protocol === 'UDP';
  const rows: [string, string][] = [];
  for (const name of ['Via', 'From', 'To', 'Call-ID', 'CSeq']) {
    for (const value of headers.getRows(name)) rows.push([name, value]);
  }
  let route: ResponseRoute;
  try {
    const [via] = parseViaList(headers.getRows('Via'));
    route = via ? responseDestination(stampSource(via, flow), flow) : backToSource(flow);
  } catch {
    // Without a readable Via the answer goes back where the request came from.
    route = backToSource(flow);
  }
  const reasons = status === 400 ? [error.reason, 'Bad Request'] : [REASONS[status]!];
  for (const reason of reasons) {
    const data = written(new SipResponse({ status, reason, headers: rows }));
    if (data && (!datagram || data.length <= requestBytes)) return { route, data };
  }
  return null;
}

function written(response: SipResponse): Buffer | null {
  try {
    return response.toBuffer();
  } catch {
    return null; // a row that cannot be written back (it came with a bare CR, say)
  }
}

function stampSource(via: ReturnType<typeof parseViaList>[number], flow: Flow): typeof via {
  // 18.2.1 as the transport would have stamped it, so that rport answers go to the source.
  const params = new Map(via.params);
  params.set('received', flow.remote.address);
  if (params.has('rport') && !params.get('rport')) params.set('rport', String(flow.remote.port));
  return { ...via, params };
}

const backToSource = (flow: Flow): ResponseRoute =>
  flow.connectionId
    ? { kind: 'connection', connectionId: flow.connectionId, fallback: flow.remote }
    : { kind: 'address', address: flow.remote };
