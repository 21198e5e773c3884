import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemScheduler } from '../../../src/core/scheduler.js';
import type { LegEnvironment } from '../../../src/call/legs/call-leg.js';
import { OutboundLeg } from '../../../src/call/legs/outbound-leg.js';
import { muLawDecode } from '../../../src/media/codec/g711.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { sleep, until } from '../../support/wait.js';

/** Legs we place, against SIPp as the carrier and a plain RTP socket as its media server. */
let gw: TestGateway;
let env: LegEnvironment;
const running: SippUas[] = [];
let media: RtpPeer | null = null;

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  env = {
    sip: gw.gateway.sip,
    media: gw.gateway.media,
    publicHost: '127.0.0.1',
    scheduler: systemScheduler,
    log: { warn: () => undefined },
  };
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((uas) => uas.stop()));
  await media?.close();
  media = null;
});

afterAll(async () => {
  await gw.close();
});

async function carrier(scenario: string, variables: Record<string, string> = {}) {
  const uas = await startSippUas({ scenario, variables });
  running.push(uas);
  return uas;
}

function dial(
  uas: SippUas,
  extra: Partial<Parameters<typeof OutboundLeg.dial>[1]> = {},
  legEnv: LegEnvironment = env,
) {
  const seen: string[] = [];
  const digits: string[] = [];
  const leg = OutboundLeg.dial(
    legEnv,
    {
      uuid: crypto.randomUUID(),
      target: `sip:14155550111@127.0.0.1:${uas.port}`,
      from: 'sip:+14155550100@127.0.0.1',
      ...extra,
    },
    {
      onRinging: () => seen.push('ringing'),
      onAnswered: () => seen.push('answered'),
      onDigit: (digit) => digits.push(digit),
    },
  );
  return { leg, seen, digits };
}

const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((s, v) => s + v * v, 0) / pcm.length);

describe('outbound legs against a SIPp carrier', () => {
  it('rings, is answered, speaks into the carrier media, and hangs up with a BYE', async () => {
    media = await RtpPeer.open();
    const uas = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    const { leg, seen } = dial(uas);
    await until(() => leg.state === 'answered', 5000);
    expect(seen).toEqual(['ringing', 'answered']);
    expect(await leg.speak('Welcome to the gateway.', 'WOMAN', 'en-US')).toBe(true);
    const heard = muLawDecode(
      Buffer.concat(media.received.filter((p) => p.payloadType === 0).map((p) => p.payload)),
    );
    expect(rms(heard)).toBeGreaterThan(300);
    await leg.hangup({
      cause: { code: 4000, name: 'Normal Hangup' },
      source: 'API Request',
      status: 'completed',
    });
    expect(await leg.ended).toMatchObject({ cause: { code: 4000 }, source: 'API Request' });
    expect(leg.times.answer).toBeGreaterThanOrEqual(leg.times.ring!);
    // The BYE's 200 reaches SIPp after the leg has ended; let it arrive.
    await sleep(300);
    const result = await uas.stop();
    expect(result.errors).toEqual([]);
    expect(result.successful).toBe(1);
    await until(() => gw.gateway.media.sessions === 0);
  });

  it('is answered before the worker has applied the answer, and drops the call with a BYE if it cannot', async () => {
    media = await RtpPeer.open();
    const uas = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    // The media plane as the leg sees it, with its answer to the update held, then refused.
    let refuse: (error: Error) => void = () => undefined;
    const refusing: LegEnvironment = {
      ...env,
      media: Object.assign(Object.create(gw.gateway.media) as typeof gw.gateway.media, {
        send: ((command) =>
          command.type === 'updateSession'
            ? new Promise((_resolve, reject) => (refuse = reject))
            : gw.gateway.media.send(command)) as typeof gw.gateway.media.send,
      }),
    };
    const { leg, seen } = dial(uas, {}, refusing);
    await until(() => leg.state === 'answered', 5000);
    expect(seen).toEqual(['ringing', 'answered']);
    refuse(new Error('no media session on this worker'));
    expect(await leg.ended).toMatchObject({
      cause: { name: 'Network Error' },
      source: 'Error',
      status: 'failed',
    });
    expect(leg.mediaProblem).toBe(
      "the answer's audio could not be applied: no media session on this worker",
    );
    await sleep(300);
    const result = await uas.stop();
    expect(result.errors).toEqual([]);
    expect(result.successful).toBe(1);
    await until(() => gw.gateway.media.sessions === 0);
  });

  it('reports busy, unavailable and refused carriers with their causes', async () => {
    for (const [status, cause, callStatus] of [
      ['busy', 'Busy Line', 'busy'],
      ['unavailable', 'Destination Out Of Service', 'failed'],
      ['not-found', 'Unallocated number', 'failed'],
      ['decline', 'Rejected', 'failed'],
    ] as const) {
      const uas = await carrier(`carrier-${status}.xml`);
      const { leg } = dial(uas);
      expect(await leg.ended, status).toMatchObject({
        cause: { name: cause },
        status: callStatus,
        source: 'Callee',
      });
      await uas.stop();
    }
    await until(() => gw.gateway.media.sessions === 0);
  });

  it('gives up ringing after ring_timeout with a CANCEL', async () => {
    const uas = await carrier('carrier-no-answer.xml');
    const { leg, seen } = dial(uas, { ringTimeoutSeconds: 1 });
    const end = await leg.ended;
    expect(end).toMatchObject({
      cause: { code: 6010, name: 'Ring Timeout Reached' },
      status: 'no-answer',
    });
    expect(seen).toEqual(['ringing']);
    // The ACK of the 487 follows the leg's end on the wire; let it reach SIPp.
    await sleep(300);
    const result = await uas.stop();
    expect(result.errors).toEqual([]);
    expect(result.successful).toBe(1);
  });

  it('takes a SIP INFO digit (200), refuses an unreadable one (400) and another body type (415)', async () => {
    const uas = await carrier('carrier-info.xml');
    const { leg, digits } = dial(uas);
    await until(() => digits.length >= 1, 5000);
    await sleep(300);
    expect(digits).toEqual(['5']);
    await leg.hangup({
      cause: { code: 4000, name: 'Normal Hangup' },
      source: 'API Request',
      status: 'completed',
    });
    await sleep(300);
    const result = await uas.stop();
    expect(result.errors).toEqual([]);
    expect(result.successful).toBe(1);
  });

  it("hears the callee's RFC 4733 digits from SIPp's captures", async () => {
    const uas = await carrier('carrier-dtmf.xml', { wait_ms: '200' });
    const { leg, digits } = dial(uas);
    await until(() => digits.length >= 3, 8000);
    expect(digits).toEqual(['1', '2', '#']);
    await leg.hangup({
      cause: { code: 4000, name: 'Normal Hangup' },
      source: 'API Request',
      status: 'completed',
    });
  });
});
