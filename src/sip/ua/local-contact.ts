import { formatUri } from '../message/index.js';
import type { TransportProtocol } from '../transport/flow.js';
import type { TransportLayer } from '../transport/transport-layer.js';

/**
 * Our Contact URI on a transport (RFC 3261 8.1.1.8, 12.1.1): the public host and that
 * transport's port, with its transport parameter when it is not UDP. It is a SIPS URI when the
 * dialog's request is one (`sips`): RFC 3261 8.1.1.8 and 12.1.1 "MUST" then; otherwise a sip:
 * URI with transport=tls (or wss), as the peer wrote its own: some clients (baresip 1.0) send
 * no ACK to a sips: Contact in the answer to their sip: request.
 */
export function localContact(
  transport: TransportLayer,
  protocol: TransportProtocol,
  user: string | null = null,
  sips = false,
): string {
  const sentBy = transport.sentBy(protocol);
  const host = sentBy.address.includes(':') ? `[${sentBy.address}]` : sentBy.address;
  const params = new Map<string, string>();
  if (protocol !== 'UDP') params.set('transport', protocol.toLowerCase());
  const scheme = sips && (protocol === 'TLS' || protocol === 'WSS') ? 'sips' : 'sip';
  return formatUri({ scheme, user, host, port: sentBy.port, params });
}
