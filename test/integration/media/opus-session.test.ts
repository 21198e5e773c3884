import { afterEach, describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { OpusDecoder, OpusEncoder } from '../../../src/media/codec/opus.js';
import type { AudioFormat } from '../../../src/media/pipeline/audio-format.js';
import type { MediaSessionSpec } from '../../../src/media/pipeline/session-spec.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import { RtpPeer, type ReceivedRtp } from '../../support/rtp-peer.js';
import { chunks, concat, strongestFrequency, tone } from '../../support/signal.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Opus legs in real worker threads against plain RTP peers that encode and decode Opus with
 * the addon: a leg opened for PCMU moves to Opus at 16 kHz when offer/answer settles it (as a
 * call leg does), transcodes to and from a PCMU leg, and carries wideband audio between two
 * Opus legs.
 */
const PCMU: AudioFormat = { encoding: 'PCMU', payloadType: 0, rate: 8000 };
const OPUS: AudioFormat = { encoding: 'opus', payloadType: 111, rate: 16000 };

let pool: MediaWorkerPool | null = null;
const peers: RtpPeer[] = [];

afterEach(async () => {
  await pool?.close();
  pool = null;
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

function startPool(): MediaWorkerPool {
  const base = 20000 + 2 * Math.floor(Math.random() * 10000);
  pool = new MediaWorkerPool(
    { onEvent: () => undefined },
    {
      size: 1,
      settings: {
        rtpPorts: { min: base, max: base + 19 },
        rtpHost: '127.0.0.1',
        cname: 'opus-session-test',
      },
    },
  );
  return pool;
}

async function peer(): Promise<RtpPeer> {
  const p = await RtpPeer.open(0x2000 + peers.length);
  peers.push(p);
  return p;
}

const spec = (p: RtpPeer): MediaSessionSpec => ({ formats: [PCMU], remote: p.address });

/** Opens a leg for PCMU, then applies Opus as answering an offer would. */
async function opusLeg(pool: MediaWorkerPool, id: string, p: RtpPeer, near?: string) {
  const opened = await pool.createSession(id, spec(p), near ? { near } : {});
  await pool.send({ type: 'updateSession', sessionId: id, changes: { formats: [OPUS] } });
  return opened;
}

function opusFrames(pcm: Int16Array): Uint8Array[] {
  const encoder = new OpusEncoder(16000);
  return [...chunks(pcm, [320])].map((frame) => encoder.encode(frame));
}

function opusHeard(received: ReceivedRtp[]): Int16Array {
  const decoder = new OpusDecoder(16000);
  return concat(
    received.filter((p) => p.payloadType === 111).map((p) => decoder.decode(p.payload)),
  );
}

/** What a peer heard from the first loud sample on, 100 ms in (the jitter buffer filled). */
function settled(pcm: Int16Array, rate: number): Int16Array {
  return pcm.subarray(pcm.findIndex((s) => Math.abs(s) > 2000) + rate / 10);
}

describe('Opus legs in worker threads', () => {
  it('transcodes between an Opus leg at 16 kHz and a PCMU leg, both ways', async () => {
    const pool = startPool();
    const [alice, bob] = [await peer(), await peer()];
    const a = await opusLeg(pool, 'a', alice);
    const b = await pool.createSession('b', spec(bob), { near: 'a' });
    await pool.send({ type: 'bridge', sessionId: 'a', peerId: 'b' });
    const fromAlice = opusFrames(tone(16000, 1000, 1.5, 8000));
    await Promise.all([
      alice.stream(a.port, fromAlice, { payloadType: 111, samples: 960 }),
      bob.stream(b.port, [...chunks(tone(8000, 600, 1.5, 8000), [160])].map(muLawEncode), {
        payloadType: 0,
      }),
    ]);
    await sleep(200);

    const atBob = settled(
      concat(bob.received.filter((p) => p.payloadType === 0).map((p) => muLawDecode(p.payload))),
      8000,
    );
    expect(atBob.length).toBeGreaterThan(4000);
    expect(strongestFrequency(atBob.subarray(0, 4000), 8000, 10)).toBe(1000);
    const atAlice = settled(opusHeard(alice.received), 16000);
    expect(atAlice.length).toBeGreaterThan(8000);
    expect(strongestFrequency(atAlice.subarray(0, 8000), 16000, 10)).toBe(600);

    // RFC 7587 4.1: payload type 111 as negotiated, 960 timestamp units per 20 ms packet.
    const toAlice = alice.received;
    expect(toAlice.every((p) => p.payloadType === 111)).toBe(true);
    for (let i = 1; i < toAlice.length; i++) {
      expect((toAlice[i]!.sequenceNumber - toAlice[i - 1]!.sequenceNumber) & 0xffff).toBe(1);
      expect((toAlice[i]!.timestamp - toAlice[i - 1]!.timestamp) >>> 0).toBe(960);
    }
    const stats = await pool.send({ type: 'sessionStats', sessionId: 'a' });
    expect(stats.inbound).toMatchObject({ unknownPayloadType: 0, undecodable: 0 });
  });

  it('carries a 6 kHz tone between two Opus legs: the call runs at 16 kHz, not 8', async () => {
    const pool = startPool();
    const [alice, carol] = [await peer(), await peer()];
    const a = await opusLeg(pool, 'a', alice);
    await opusLeg(pool, 'c', carol, 'a');
    await pool.send({ type: 'bridge', sessionId: 'a', peerId: 'c' });
    await alice.stream(a.port, opusFrames(tone(16000, 6000, 1, 8000)), {
      payloadType: 111,
      samples: 960,
    });
    await until(() => carol.received.length >= 50);
    await sleep(200);
    const atCarol = settled(opusHeard(carol.received), 16000);
    expect(atCarol.length).toBeGreaterThan(8000);
    expect(strongestFrequency(atCarol.subarray(0, 8000), 16000, 10)).toBe(6000);
  });
});
