import { describe, expect, it } from 'vitest';
import { endOfFailedInvite, endOfWebrtcTransport } from '../../../src/call/legs/leg-end.js';
import type { InviteFailure } from '../../../src/sip/ua/outgoing-invite.js';
import type { SipResponse } from '../../../src/sip/message/index.js';

const response = {} as SipResponse;
const rejected = (status: number): InviteFailure => ({
  kind: 'rejected',
  status,
  reason: 'x',
  response,
});

describe('endOfFailedInvite', () => {
  it.each([
    [rejected(486), false, 3010, 'busy'],
    [rejected(600), false, 3010, 'busy'],
    [rejected(480), false, 3000, 'no-answer'],
    [rejected(404), false, 3050, 'failed'],
    [rejected(484), false, 3050, 'failed'],
    [rejected(403), false, 3040, 'failed'],
    [rejected(603), false, 3020, 'failed'],
    [rejected(503), false, 2010, 'failed'],
    [rejected(408), false, 3070, 'timeout'],
    [rejected(408), true, 4250, 'timeout'],
    [{ kind: 'timeout', status: 408, reason: 'Timer B' } as InviteFailure, false, 3070, 'timeout'],
    [{ kind: 'timeout', status: 408, reason: 'Timer B' } as InviteFailure, true, 4250, 'timeout'],
    [
      { kind: 'auth-failed', status: 401, reason: 'again', response } as InviteFailure,
      true,
      4240,
      'failed',
    ],
    [
      { kind: 'transport', status: 503, reason: 'down', error: new Error('x') } as InviteFailure,
      false,
      2010,
      'failed',
    ],
  ])('maps %o (credentials given: %s) to %i / %s', (failure, authenticated, code, status) => {
    expect(endOfFailedInvite(failure, authenticated)).toMatchObject({
      cause: { code },
      status,
      source: 'Callee',
    });
  });
});

describe('endOfWebrtcTransport', () => {
  it('ends a lost consent as 6020, a failed handshake as 5000, a close_notify as the peer hanging up', () => {
    const lost = { kind: 'consent-lost', message: 'ICE consent lost' } as const;
    expect(endOfWebrtcTransport(lost, 'inbound', 'answered')).toEqual({
      cause: { code: 6020, name: 'Media Timeout' },
      source: 'Error',
      status: 'completed',
      reason: 'ICE consent lost',
    });
    const failed = { kind: 'dtls-failed', message: 'DTLS handshake failed' } as const;
    expect(endOfWebrtcTransport(failed, 'outbound', 'early')).toMatchObject({
      cause: { code: 5000, name: 'Network Error' },
      source: 'Error',
      status: 'failed',
    });
    const closed = { kind: 'dtls-closed', message: 'the peer closed DTLS' } as const;
    expect(endOfWebrtcTransport(closed, 'inbound', 'answered')).toMatchObject({
      cause: { code: 4000, name: 'Normal Hangup' },
      source: 'Caller',
      status: 'completed',
    });
    expect(endOfWebrtcTransport(closed, 'outbound', 'answered').source).toBe('Callee');
  });
});
