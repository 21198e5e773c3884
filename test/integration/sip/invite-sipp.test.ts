import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipStack } from '../../../src/sip/sip-stack.js';
import type { TimerSettings } from '../../../src/sip/transaction/timers.js';
import type { InviteClient } from '../../../src/sip/ua/invite-client.js';
import type { InviteServer } from '../../../src/sip/ua/invite-server.js';
import { startLossyUdpRelay, type LossyUdpRelay } from '../../support/lossy-udp-relay.js';
import { openSipPeer } from '../../support/sip-peer.js';
import { runSipp, startSippUas, type SippResult } from '../../support/sipp.js';

/** T1 of 100 ms: losses recover quickly; SIPp keeps its own 500 ms. */
const TIMERS: TimerSettings = { t1: 100, t2: 800, t4: 1000 };

const OFFER =
  'v=0\r\no=voxgate 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n' +
  'm=audio 40000 RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\n';
const ANSWER = OFFER.replace('40000', '40002').replace('o=voxgate 1 1', 'o=voxgate 2 2');

let stack: SipStack;
let port: number;
let client: InviteClient;
let server: InviteServer;
/** Calls our UAS answered and then saw ended by the caller's BYE, by Request-URI user. */
const endedByCaller = new Map<string, number>();

beforeAll(async () => {
  ({ stack, port, uac: client, uas: server } = await openSipPeer({ timers: TIMERS }));
  server.onInvite = (invite) => {
    const uri = invite.request.requestUri();
    const user = 'user' in uri ? (uri.user ?? '') : '';
    invite.ring();
    const dialog = invite.answer(ANSWER);
    dialog.delegate = {
      onTerminated: (end) => {
        if (end.kind !== 'bye' || end.by !== 'remote') return;
        endedByCaller.set(user, (endedByCaller.get(user) ?? 0) + 1);
      },
    };
  };
});

afterAll(() => stack.close());

/** Places `count` calls through our UAC to `port`, each hung up with a BYE once answered. */
async function callOut(count: number, target: number): Promise<number[]> {
  const calls = Array.from({ length: count }, async (_, i) => {
    const outcome = await client.invite({
      target: `sip:callee${i}@127.0.0.1:${target}`,
      from: 'sip:voxgate@127.0.0.1',
      sdp: OFFER,
    }).outcome;
    if (!outcome.answered) return outcome.failure.status;
    expect(outcome.sdp).toMatch(/^m=audio \d+ RTP\/AVP 0 101/m);
    const bye = await outcome.dialog.bye();
    return bye?.status ?? 0;
  });
  return Promise.all(calls);
}

/** SIPp saw no unexpected message and no failed call, and took part in `calls` calls. */
function expectClean(result: SippResult, calls: number): void {
  expect(result.errors, result.screen).toEqual([]);
  expect(result.failed).toBe(0);
  // A UAS stopped early still holds its last calls in their timewait (uas-invite.xml).
  expect(result.successful + Number(result.stats.CurrentCall ?? 0)).toBe(calls);
}

describe.concurrent('INVITE against SIPp over UDP', () => {
  it('our UAC calls a SIPp UAS: answered, ACKed, hung up', async () => {
    const uas = await startSippUas({ scenario: 'uas-invite.xml' });
    try {
      expect(await callOut(3, uas.port)).toEqual([200, 200, 200]);
    } finally {
      expectClean(await uas.stop(), 3);
    }
  });

  it('a SIPp UAC calls our UAS: 180, 200 with SDP, ACK, BYE', async () => {
    const result = await runSipp({
      scenario: 'uac-invite.xml',
      target: { host: '127.0.0.1', port },
      calls: 5,
      rate: 50,
      timeoutMs: 8000,
      extraArgs: ['-s', 'direct'],
    });
    expectClean(result, 5);
    expect(endedByCaller.get('direct')).toBe(5);
  });

  it('our UAC calls a SIPp UAS through a relay that loses 10 % of datagrams', async () => {
    const uas = await startSippUas({ scenario: 'uas-invite.xml' });
    let relay: LossyUdpRelay | undefined;
    try {
      relay = await startLossyUdpRelay({ target: uas, dropRate: 0.1, seed: 7 });
      // The INVITE and its responses cross the relay; SIPp's Contact takes ACK and BYE direct.
      expect(await callOut(10, relay.port)).toEqual(Array(10).fill(200));
      expect(relay.counts().upstream.dropped + relay.counts().downstream.dropped).toBeGreaterThan(
        0,
      );
    } finally {
      await relay?.stop();
      expectClean(await uas.stop(), 10);
    }
  });

  it('a SIPp UAC calls our UAS through a relay that loses 10 % of datagrams', async () => {
    const relay = await startLossyUdpRelay({
      target: { host: '127.0.0.1', port },
      dropRate: 0.1,
      seed: 11,
    });
    try {
      const result = await runSipp({
        scenario: 'uac-invite.xml',
        target: relay,
        calls: 10,
        rate: 50,
        timeoutMs: 9000,
        extraArgs: ['-s', 'lossy'],
      });
      expectClean(result, 10);
      expect(endedByCaller.get('lossy')).toBe(10);
      expect(relay.counts().upstream.dropped + relay.counts().downstream.dropped).toBeGreaterThan(
        0,
      );
    } finally {
      await relay.stop();
    }
  });
});
