import type { SipMessage } from '../message/index.js';

export const SDP = 'application/sdp';

/** The session description a message carries (RFC 3264 offer or answer), or null. */
export function sdpOf(message: SipMessage): string | null {
  if (message.body.length === 0) return null;
  let type;
  try {
    type = message.contentType();
  } catch {
    return null; // a Content-Type that does not parse names no session description
  }
  if (!type || `${type.type}/${type.subtype}`.toLowerCase() !== SDP) return null;
  return message.body.toString('utf8');
}
