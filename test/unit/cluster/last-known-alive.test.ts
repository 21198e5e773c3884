import { describe, expect, it } from 'vitest';
import type { FoundCallEntry } from '../../../src/cluster/live-call-directory.js';
import { lastKnownAlive } from '../../../src/cluster/node-reaper.js';

const T0 = 1_700_000_000_000;
const entry = (over: Partial<FoundCallEntry>): FoundCallEntry => ({
  uuid: 'u',
  node: 'n',
  account: 'MA',
  subaccount: null,
  authId: 'MA',
  requestUuid: null,
  direction: 'inbound',
  from: '1',
  to: '2',
  callType: 'voice',
  parentCallUuid: null,
  sourceIp: '127.0.0.1',
  initiated: T0,
  answered: T0 + 1_000,
  hangup: null,
  params: {},
  seenAt: null,
  ...over,
});

describe('lastKnownAlive', () => {
  it('is the node last heartbeat for a call it refreshed until then', () => {
    expect(lastKnownAlive(entry({ seenAt: T0 + 59_990 }), T0 + 60_000)).toBe(T0 + 59_990);
  });

  it('is the last refresh of a call that ended unrecorded, however long its node lived on', () => {
    // Ended at 9 s while Redis was away; the node beat for 50 minutes more.
    expect(lastKnownAlive(entry({ seenAt: T0 + 8_500 }), T0 + 3_060_000)).toBe(T0 + 8_500);
  });

  it('is never before the answer, and without any time known the answer or the start', () => {
    expect(lastKnownAlive(entry({ answered: T0 + 5_000, seenAt: T0 + 4_000 }), T0 + 4_500)).toBe(
      T0 + 5_000,
    );
    expect(lastKnownAlive(entry({}), null)).toBe(T0 + 1_000);
    expect(lastKnownAlive(entry({ answered: null }), null)).toBe(T0);
  });
});
