import { afterEach, describe, expect, it } from 'vitest';
import { encodeTelephoneEvent } from '../../../src/media/dtmf/index.js';
import type { SessionEvent } from '../../../src/media/worker/protocol.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { until } from '../../support/wait.js';

/** The gateway's media plane as the call layer uses it: events per leg, metrics, crashes. */
let gw: TestGateway | null = null;
let phone: RtpPeer | null = null;

afterEach(async () => {
  await gw?.close();
  await phone?.close();
  gw = null;
  phone = null;
});

const SPEC = {
  formats: [{ encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const }],
  telephoneEvent: { payloadType: 101, rate: 8000 },
};

async function metric(name: string): Promise<number> {
  const text = (await gw!.request('GET', '/metrics', { as: null })).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

describe('the gateway media service', () => {
  it('opens a leg on the configured range, routes its events to it, and counts it', async () => {
    gw = await startGateway({ env: { VOXGATE_PUBLIC_HOST: '192.0.2.10' } });
    phone = await RtpPeer.open();
    const events: SessionEvent[] = [];
    const opened = await gw.gateway.media.open('leg-1', { ...SPEC, remote: phone.address }, (e) =>
      events.push(e),
    );
    expect(opened.address).toBe('192.0.2.10');
    expect(opened.port % 2).toBe(0);
    expect(await metric('voxgate_media_sessions')).toBe(1);

    const timestamp = phone.nextTimestamp;
    for (let i = 0; i < 3; i++) {
      phone.send(
        opened.port,
        encodeTelephoneEvent({ event: 11, end: true, volume: 10, duration: 800 }),
        {
          payloadType: 101,
          timestamp,
        },
      );
    }
    await until(() => events.some((e) => e.type === 'dtmf'));
    expect(events.filter((e) => e.type === 'dtmf')).toEqual([
      { type: 'dtmf', digit: '#', source: 'rfc4733', durationMs: 100 },
    ]);
    const stats = await gw.gateway.media.send({ type: 'sessionStats', sessionId: 'leg-1' });
    expect(stats.packetsReceived).toBe(3);
    gw.gateway.media.close('leg-1');
    expect(await metric('voxgate_media_sessions')).toBe(0);
  });

  it('ends the legs of a crashed worker with the cause, and counts the crash', async () => {
    gw = await startGateway();
    const events: SessionEvent[] = [];
    await gw.gateway.media.open('leg-2', SPEC, (e) => events.push(e));
    // A crash as a fault in native code would cause one.
    await (
      gw.gateway.media as unknown as { pool: { crashWorkerOf(id: string): Promise<void> } }
    ).pool.crashWorkerOf('leg-2');
    await until(() => events.length > 0);
    expect(events[0]).toMatchObject({
      type: 'ended',
      cause: expect.stringMatching(/^media worker crashed/),
    });
    expect(await metric('voxgate_media_worker_crashes_total')).toBe(1);
    expect(gw.logs.some((l) => l.includes('media worker crashed'))).toBe(true);
    // The next leg gets a fresh worker.
    await gw.gateway.media.open('leg-3', SPEC, () => {});
  });
});
