import { afterEach, describe, expect, it } from 'vitest';
import { startBaresip, type Baresip } from '../../support/baresip.js';
import { startLossyUdpRelay, type LossyUdpRelay } from '../../support/lossy-udp-relay.js';
import { runSipp, startSippUas, type SippUas, type SipTransport } from '../../support/sipp.js';

/**
 * The real-peer harness on its own, without voxgate: SIPp calling SIPp, directly and through a
 * relay that loses a tenth of the datagrams each way, and baresip registering with a SIPp
 * registrar stub. Everything runs on 127.0.0.1 on random ports and is stopped after each test.
 */

describe('SIP test harness', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  const started = <T extends { stop(): Promise<unknown> }>(peer: T): T => {
    cleanups.push(() => peer.stop());
    return peer;
  };
  afterEach(async () => {
    await Promise.allSettled(
      cleanups
        .splice(0)
        .reverse()
        .map((stop) => stop()),
    );
  });

  it.each<SipTransport>(['udp', 'tcp'])(
    'places calls over %s from the uac-invite scenario to the uas-invite scenario',
    async (transport) => {
      const uas: SippUas = started(await startSippUas({ scenario: 'uas-invite.xml', transport }));
      const result = await runSipp({
        scenario: 'uac-invite.xml',
        target: uas,
        transport,
        calls: 10,
        rate: 20,
        timeoutMs: 15_000,
      });
      expect(result.errors).toEqual([]);
      expect(result).toMatchObject({
        exitCode: 0,
        outcome: 'all-succeeded',
        successful: 10,
        failed: 0,
      });
      const callee = await uas.stop();
      expect(callee.stats['IncomingCall(C)']).toBe('10');
      expect(callee.errors).toEqual([]);
    },
  );

  it('completes every call over UDP when 10% of datagrams are lost each way', async () => {
    const uas: SippUas = started(await startSippUas({ scenario: 'uas-invite.xml' }));
    const relay: LossyUdpRelay = started(
      await startLossyUdpRelay({ target: uas, dropRate: 0.1, seed: 7 }),
    );
    const result = await runSipp({
      scenario: 'uac-invite.xml',
      target: relay,
      calls: 20,
      rate: 10,
      timeoutMs: 45_000,
    });
    expect(result.errors).toEqual([]);
    expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 20, failed: 0 });
    // The losses happened, and SIPp's retransmissions (T1 = 500 ms, doubling) made up for them.
    const counts = relay.counts();
    expect(counts.upstream.dropped + counts.downstream.dropped).toBeGreaterThan(0);
    expect(Number(result.stats['Retransmissions(C)'])).toBeGreaterThan(0);
    const callee = await uas.stop();
    expect(callee.stats['IncomingCall(C)']).toBe('20');
    expect(callee.errors).toEqual([]);
  }, 60_000);

  it('relays each client to its own upstream socket and drops nothing at rate 0', async () => {
    const uas: SippUas = started(await startSippUas({ scenario: 'uas-invite.xml' }));
    const relay: LossyUdpRelay = started(await startLossyUdpRelay({ target: uas, dropRate: 0 }));
    const runs = await Promise.all(
      [1, 2].map(() =>
        runSipp({ scenario: 'uac-invite.xml', target: relay, calls: 3, timeoutMs: 15_000 }),
      ),
    );
    for (const run of runs) expect(run).toMatchObject({ outcome: 'all-succeeded', successful: 3 });
    const counts = relay.counts();
    expect(counts.upstream.dropped + counts.downstream.dropped).toBe(0);
    // INVITE, ACK and BYE up; 180, 200 and 200 down, for each of the 6 calls
    expect(counts.upstream.forwarded).toBe(18);
    expect(counts.downstream.forwarded).toBe(18);
  });

  it('refuses a drop rate outside 0 to 1', async () => {
    await expect(
      startLossyUdpRelay({ target: { host: '127.0.0.1', port: 9 }, dropRate: 10 }),
    ).rejects.toThrow('Expected a number between 0 and 1 for dropRate but received 10');
  });

  it('starts baresip headless, sees it register with a registrar stub, and stops it', async () => {
    const registrar: SippUas = started(
      await startSippUas({ scenario: 'registrar-stub.xml', traceMessages: true }),
    );
    const phone: Baresip = started(
      await startBaresip({ username: 'alice', password: 'secret', registrar }),
    );
    const line = await phone.waitForRegistered();
    expect(line).toMatch(/^alice@127\.0\.0\.1: \{0\/UDP\/v4\} 200 OK .*\[1 binding\]$/);
    await phone.stop();
    // Stopping unregisters (expires=0), and the stub answered both REGISTERs of its one call.
    const stub = await registrar.stop();
    expect(stub.errors).toEqual([]);
    expect(stub.stats['IncomingCall(C)']).toBe('1');
    expect(stub.messages).toMatch(/^Contact: <sip:alice-[^>]*>;expires=0\r?$/m);
    expect(stub.messages.match(/^SIP\/2\.0 200 OK/gm)).toHaveLength(2);
  });
});
