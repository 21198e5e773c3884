import type { DigestAlgorithm } from '../auth/digest.js';
import type { SipRequest } from '../message/index.js';
import type { Flow } from '../transport/flow.js';

/** Which digest algorithms are offered to whom, each list most preferred first. */
export interface DigestOfferPolicy {
  /** Over UDP, TCP and TLS. Default MD5 alone. */
  sip?: readonly DigestAlgorithm[];
  /** Over WebSocket, WS and WSS. Default SHA-256, then MD5. */
  websocket?: readonly DigestAlgorithm[];
  /** User-Agent prefixes (lower case) offered MD5 alone on every transport: an override. */
  md5OnlyAgents?: readonly string[];
}

const SIP_DEFAULT: readonly DigestAlgorithm[] = ['MD5'];
const WEBSOCKET_DEFAULT: readonly DigestAlgorithm[] = ['SHA-256', 'MD5'];
const MD5_ONLY: readonly DigestAlgorithm[] = ['MD5'];

/**
 * The digest challenges a client gets, in order, and so the algorithms its answer may use.
 *
 * One order cannot serve every peer. RFC 8760 2.5 has a UAC take the topmost challenge it
 * supports, so an RFC 8760 client offered MD5 first answers MD5 whatever follows; SIPp 3.6
 * reads the first `algorithm=` of the 401 and stops its run on SHA-256; libre 1.1 (baresip
 * 1.0) fails on a 401 holding any algorithm but MD5, wherever it stands; sip.js 0.21 and
 * JsSIP keep the last WWW-Authenticate header and know only MD5. Desk phones and softphones
 * on UDP, TCP and TLS therefore get MD5 alone by default, as Asterisk, FreeSWITCH and
 * Kamailio challenge; WebSocket clients (browser stacks) get SHA-256 first, which an RFC 8760
 * client takes, and MD5 last, which sip.js and JsSIP take.
 */
export function digestOffer(
  policy: DigestOfferPolicy,
  request: SipRequest,
  flow: Flow,
): readonly DigestAlgorithm[] {
  const agent = request.headers.get('User-Agent')?.toLowerCase() ?? '';
  if (policy.md5OnlyAgents?.some((prefix) => agent.startsWith(prefix))) return MD5_ONLY;
  return flow.protocol === 'WS' || flow.protocol === 'WSS'
    ? (policy.websocket ?? WEBSOCKET_DEFAULT)
    : (policy.sip ?? SIP_DEFAULT);
}
