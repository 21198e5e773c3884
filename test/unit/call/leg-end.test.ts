import { describe, expect, it } from 'vitest';
import { endOfFailedInvite } from '../../../src/call/legs/leg-end.js';
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
