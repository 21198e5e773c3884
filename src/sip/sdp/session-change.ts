import type { NegotiatedAudio } from './negotiated-audio.js';
import { isNullAddress } from './session-description.js';

/** One thing a re-INVITE changed in the audio stream. */
export type SessionChange =
  | { readonly kind: 'remote-address'; readonly address: string; readonly port: number }
  | { readonly kind: 'codec'; readonly encoding: string; readonly payloadType: number }
  | { readonly kind: 'telephone-event'; readonly payloadType: number | null }
  | { readonly kind: 'hold' }
  | { readonly kind: 'resume' }
  | { readonly kind: 'direction'; readonly direction: NegotiatedAudio['direction'] };

/**
 * What changed between two negotiations of the same session (RFC 3264 8): where to send, the
 * codec, the DTMF payload type, hold and resume. A null address for hold is not a move.
 */
export function sessionChanges(before: NegotiatedAudio, after: NegotiatedAudio): SessionChange[] {
  const changes: SessionChange[] = [];
  const moved =
    before.remoteAddress !== after.remoteAddress || before.remotePort !== after.remotePort;
  if (moved && !isNullAddress(after.remoteAddress)) {
    changes.push({ kind: 'remote-address', address: after.remoteAddress, port: after.remotePort });
  }
  const codecChanged =
    before.codec.payloadType !== after.codec.payloadType ||
    before.codec.encoding.toLowerCase() !== after.codec.encoding.toLowerCase() ||
    before.codec.clockRate !== after.codec.clockRate;
  if (codecChanged) {
    changes.push({
      kind: 'codec',
      encoding: after.codec.encoding,
      payloadType: after.codec.payloadType,
    });
  }
  const eventBefore = before.telephoneEvent?.payloadType ?? null;
  const eventAfter = after.telephoneEvent?.payloadType ?? null;
  if (eventBefore !== eventAfter)
    changes.push({ kind: 'telephone-event', payloadType: eventAfter });
  if (!before.heldByPeer && after.heldByPeer) changes.push({ kind: 'hold' });
  if (before.heldByPeer && !after.heldByPeer) changes.push({ kind: 'resume' });
  if (before.direction !== after.direction) {
    changes.push({ kind: 'direction', direction: after.direction });
  }
  return changes;
}
