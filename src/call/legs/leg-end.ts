import { hangupCause, type HangupCause } from '../hangup-causes.js';
import type { InviteFailure } from '../../sip/ua/outgoing-invite.js';

/** CallStatus as callbacks and records report it. */
export type CallStatus =
  'ringing' | 'in-progress' | 'completed' | 'busy' | 'failed' | 'timeout' | 'no-answer';

/** hangup_source values (voice document). */
export type HangupSource =
  'Caller' | 'Callee' | 'Service' | 'API Request' | 'Answer XML' | 'Error' | 'Unknown';

/** How a leg ended. */
export interface LegEnd {
  cause: HangupCause;
  source: HangupSource;
  /** CallStatus on the hangup callback. */
  status: CallStatus;
  /**
   * The final response an unanswered caller gets, when it relays the callee's own (a trunk
   * call answered 486 by the PBX); otherwise one follows from the cause.
   */
  sipStatus?: number;
  /**
   * Why, in words for the operator's log (the far end's answer, the error): never sent to a
   * client, never stored.
   */
  reason?: string;
}

/** The leg was answered and then ended: `completed` whatever the cause. */
export function endAfterAnswer(cause: HangupCause, source: HangupSource): LegEnd {
  return { cause, source, status: 'completed' };
}

/**
 * Why an outbound INVITE did not become a call, as the API reports it:
 *
 * | SIP outcome                          | cause                          | CallStatus  |
 * | ------------------------------------ | ------------------------------ | ----------- |
 * | 486, 600                             | 3010 Busy Line                 | busy        |
 * | 480, 487 from the far end            | 3000 No Answer                 | no-answer   |
 * | 408, no final response (Timer B)     | 3070 Request timeout           | timeout     |
 * | 403                                  | 3040 Forbidden                 | failed      |
 * | 603, other 4xx and 6xx               | 3020 Rejected                  | failed      |
 * | 404, 484, 604                        | 3050 Unallocated number        | failed      |
 * | 5xx, unreachable, unresolvable       | 2010 Destination Out Of Service| failed      |
 * | credentials refused                  | 4240 sip_auth_failed           | failed      |
 * | no answer to our credentials         | 4250 sip_auth_timeout          | timeout     |
 */
export function endOfFailedInvite(failure: InviteFailure, authenticated: boolean): LegEnd {
  const callee = (name: Parameters<typeof hangupCause>[0], status: CallStatus): LegEnd => ({
    cause: hangupCause(name),
    source: 'Callee',
    status,
    reason: failureReason(failure),
  });
  if (failure.kind === 'auth-failed') return callee('sip_auth_failed', 'failed');
  if (failure.kind === 'timeout') {
    return authenticated
      ? callee('sip_auth_timeout', 'timeout')
      : callee('Request timeout', 'timeout');
  }
  if (failure.kind === 'transport') return callee('Destination Out Of Service', 'failed');
  const status = failure.status;
  if (status === 486 || status === 600) return callee('Busy Line', 'busy');
  if (status === 480 || status === 487) return callee('No Answer', 'no-answer');
  if (status === 408) {
    return authenticated
      ? callee('sip_auth_timeout', 'timeout')
      : callee('Request timeout', 'timeout');
  }
  if (status === 404 || status === 484 || status === 604)
    return callee('Unallocated number', 'failed');
  if (status === 403) return callee('Forbidden', 'failed');
  if (status >= 500 && status < 600) return callee('Destination Out Of Service', 'failed');
  return callee('Rejected', 'failed');
}

function failureReason(failure: InviteFailure): string {
  switch (failure.kind) {
    case 'auth-failed':
      return `the far end refused the credentials (${failure.status} ${failure.reason})`;
    case 'timeout':
      return 'no final response to the INVITE';
    case 'transport':
      return `the INVITE could not be sent: ${failure.error.message}`;
    default:
      return `the far end answered ${failure.status} ${failure.reason}`;
  }
}

/**
 * How a WebRTC leg ends when its transport does: consent lost (RFC 7675: the browser went
 * away without a BYE, or never connected) is 6020 Media Timeout; the peer's DTLS close_notify
 * is the peer hanging up, 4000 Normal Hangup; a failed DTLS handshake (a timeout, an alert, a
 * certificate that is not the one its fingerprint names) is 5000 Network Error.
 */
export function endOfWebrtcTransport(
  failure: { kind: 'consent-lost' | 'dtls-failed' | 'dtls-closed'; message: string },
  direction: 'inbound' | 'outbound',
  state: string,
): LegEnd {
  const status: CallStatus = state === 'answered' ? 'completed' : 'failed';
  if (failure.kind === 'dtls-closed') {
    const source = direction === 'inbound' ? 'Caller' : 'Callee';
    return { cause: hangupCause('Normal Hangup'), source, status, reason: failure.message };
  }
  const cause = hangupCause(failure.kind === 'consent-lost' ? 'Media Timeout' : 'Network Error');
  return { cause, source: 'Error', status, reason: failure.message };
}
