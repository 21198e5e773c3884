import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { muLawEncode } from '../../../src/media/codec/g711.js';
import type { MediaSessionSpec } from '../../../src/media/pipeline/session-spec.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import { wavSamples } from '../../support/phone-audio.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { chunks, powerAt, strongestFrequency, tone } from '../../support/signal.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Recordings written by a real media worker as the audio of two bridged legs passes, each
 * phone playing its own tone: the file decoded and its tones found on the right channel at
 * the right time; a file taken away mid-recording fails the recording, not the call.
 */
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };

let pool: MediaWorkerPool | null = null;
let dir = '';
const peers: RtpPeer[] = [];

afterEach(async () => {
  await pool?.close();
  pool = null;
  await Promise.all(peers.splice(0).map((p) => p.close()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function bridgedCall(mode: 'mix' | 'relay') {
  const base = 20000 + 2 * Math.floor(Math.random() * 10000);
  pool = new MediaWorkerPool(
    { onEvent: () => {} },
    {
      size: 1,
      settings: {
        rtpPorts: { min: base, max: base + 199 },
        rtpHost: '127.0.0.1',
        cname: 'recording-test',
      },
    },
  );
  dir = await mkdtemp(join(tmpdir(), 'voxgate-rec-'));
  const alice = await RtpPeer.open(0x2001);
  const bob = await RtpPeer.open(0x2002);
  peers.push(alice, bob);
  const spec = (p: RtpPeer): MediaSessionSpec => ({ formats: [PCMU], remote: p.address });
  const a = await pool.createSession('a', spec(alice));
  const b = await pool.createSession('b', spec(bob), { near: 'a' });
  await pool.send({ type: 'bridge', sessionId: 'a', peerId: 'b', mode });
  return { pool, alice, bob, a, b };
}

const frames = (pcm: Int16Array): Uint8Array[] => [...chunks(pcm, [160])].map(muLawEncode);

/** Channel `channel` of an interleaved WAV's samples. */
function channelOf(file: Buffer, channel: number): Int16Array {
  const channels = file.readUInt16LE(22);
  const data = file.subarray(44);
  const out = new Int16Array(data.length / 2 / channels);
  for (let i = 0; i < out.length; i++) out[i] = data.readInt16LE((i * channels + channel) * 2);
  return out;
}

/** Index of the first 20 ms window where `hz` is clearly present. */
function onsetOf(pcm: Int16Array, hz: number): number {
  for (let at = 0; at + 160 <= pcm.length; at += 40) {
    if (powerAt(pcm.subarray(at, at + 160), 8000, hz) > 1e6) return at;
  }
  return -1;
}

describe('call recording in the media worker', () => {
  it('writes stereo with each party on its own channel, its tones at the right time', async () => {
    const { pool, alice, bob, a, b } = await bridgedCall('mix');
    const path = join(dir, 'stereo.wav');
    const started = Date.now();
    const done = pool.send({
      type: 'startRecording',
      sessionId: 'a',
      recording: { recordingId: 'r1', path, channels: 2, maxMs: 2000 },
    });
    // 500 ms of nothing, then each phone plays its own tone for a second.
    await sleep(500 - (Date.now() - started));
    const sentAt = Date.now() - started;
    await Promise.all([
      alice.stream(a.port, frames(tone(8000, 440, 1, 8000)), { payloadType: 0 }),
      bob.stream(b.port, frames(tone(8000, 1000, 1, 8000)), { payloadType: 0 }),
    ]);
    const outcome = await done;

    expect(outcome).toMatchObject({
      recordingId: 'r1',
      state: 'completed',
      reason: 'max-length',
      durationMs: 2000,
      rate: 8000,
      channels: 2,
      bytes: 2000 * 8 * 2 * 2,
    });
    const file = await readFile(path);
    const { rate, channels } = wavSamples(file);
    expect([rate, channels, file.length]).toEqual([8000, 2, 44 + 64000]);
    const left = channelOf(file, 0);
    const right = channelOf(file, 1);
    // Alice (the leg's party) on the left, what she hears (Bob) on the right, each alone.
    const onset = onsetOf(left, 440);
    // The tone starts where it was sent, plus the jitter buffer's delay (under 150 ms).
    expect(onset / 8).toBeGreaterThanOrEqual(sentAt - 20);
    expect(onset / 8).toBeLessThan(sentAt + 150);
    const middle = (pcm: Int16Array) => pcm.subarray(onset + 2000, onset + 6000);
    expect(strongestFrequency(middle(left), 8000, 10)).toBe(440);
    expect(strongestFrequency(middle(right), 8000, 10)).toBe(1000);
    expect(powerAt(middle(left), 8000, 1000)).toBeLessThan(powerAt(middle(left), 8000, 440) / 100);
    expect(powerAt(middle(right), 8000, 440)).toBeLessThan(
      powerAt(middle(right), 8000, 1000) / 100,
    );
    // Before the tones: silence on both channels.
    expect(left.subarray(0, 3000).every((s) => Math.abs(s) < 50)).toBe(true);
    expect(right.subarray(0, 3000).every((s) => Math.abs(s) < 50)).toBe(true);
  });

  it('mixes both parties into mono, also while the legs relay RTP undecoded', async () => {
    const { pool, alice, bob, a, b } = await bridgedCall('relay');
    const path = join(dir, 'mono.wav');
    const done = pool.send({
      type: 'startRecording',
      sessionId: 'a',
      recording: { recordingId: 'r2', path, channels: 1 },
    });
    await Promise.all([
      alice.stream(a.port, frames(tone(8000, 440, 1, 8000)), { payloadType: 0 }),
      bob.stream(b.port, frames(tone(8000, 1000, 1, 8000)), { payloadType: 0 }),
    ]);
    await sleep(100);
    expect(await pool.send({ type: 'stopRecording', sessionId: 'a' })).toEqual({ stopped: 1 });
    const outcome = await done;
    expect(outcome).toMatchObject({ state: 'completed', reason: 'stopped', channels: 1 });

    const file = await readFile(path);
    const { pcm, channels } = wavSamples(file);
    expect(channels).toBe(1);
    expect(pcm.length).toBe(outcome.durationMs * 8);
    const middle = pcm.subarray(onsetOf(pcm, 440) + 2000, onsetOf(pcm, 440) + 6000);
    const p440 = powerAt(middle, 8000, 440);
    const p1000 = powerAt(middle, 8000, 1000);
    // Both tones, at about the level each was sent at.
    expect(p1000 / p440).toBeGreaterThan(0.5);
    expect(p1000 / p440).toBeLessThan(2);
    expect(powerAt(middle, 8000, 700)).toBeLessThan(p440 / 100);
  });

  it('fails the recording, not the call, when its file is taken away mid-recording', async () => {
    const { pool, alice, bob, a } = await bridgedCall('mix');
    const path = join(dir, 'lost.wav');
    const done = pool.send({
      type: 'startRecording',
      sessionId: 'a',
      recording: { recordingId: 'r3', path, channels: 1, maxMs: 10_000 },
    });
    const talking = alice.stream(a.port, frames(tone(8000, 440, 3, 8000)), { payloadType: 0 });
    await sleep(500);
    // The disk fills up: the file now leads to a device that refuses every write (ENOSPC).
    await rm(path);
    await symlink('/dev/full', path);
    const outcome = await done;
    expect(outcome.state).toBe('failed');
    expect(outcome.reason).toBe('failed');
    expect(outcome.message).toMatch(/ENOSPC/);
    expect(outcome.durationMs).toBeLessThan(3000);

    // The call goes on: Alice's tone still reaches Bob after the recording failed.
    const before = bob.received.length;
    await until(() => bob.received.length > before + 10);
    await talking;
    const stats = await pool.send({ type: 'sessionStats', sessionId: 'a' });
    expect(stats.packetsReceived).toBe(150);
  });

  it('stops the recording asked for when several start at once, one stopped before its file is made', async () => {
    const { pool } = await bridgedCall('mix');
    const start = (recordingId: string) =>
      pool.send({
        type: 'startRecording',
        sessionId: 'a',
        recording: {
          recordingId,
          path: join(dir, `${recordingId}.wav`),
          channels: 1,
          maxMs: 10_000,
        },
      });
    // Sent back to back, as two API requests a moment apart reach the worker: each file is
    // still being made when the next start, or a stop, comes.
    const first = start('first');
    const second = start('second');
    const third = start('third');
    expect(
      await pool.send({ type: 'stopRecording', sessionId: 'a', recordingId: 'third' }),
    ).toEqual({ stopped: 1 });
    expect(await third).toMatchObject({ recordingId: 'third', reason: 'stopped' });
    await sleep(300);
    expect(
      await pool.send({ type: 'stopRecording', sessionId: 'a', recordingId: 'first' }),
    ).toEqual({ stopped: 1 });
    const stopped = await first;
    expect(stopped).toMatchObject({ recordingId: 'first', state: 'completed', reason: 'stopped' });
    expect(stopped.durationMs).toBeLessThan(2000);
    // The other one runs on until it is stopped in its turn.
    expect(
      await pool.send({ type: 'stopRecording', sessionId: 'a', recordingId: 'second' }),
    ).toEqual({ stopped: 1 });
    expect(await second).toMatchObject({ recordingId: 'second', reason: 'stopped' });
  });

  it('refuses a second recording of the same id and a file that already exists', async () => {
    const { pool } = await bridgedCall('mix');
    const path = join(dir, 'one.wav');
    const first = pool.send({
      type: 'startRecording',
      sessionId: 'a',
      recording: { recordingId: 'r4', path, channels: 1 },
    });
    await until(async () => (await readFile(path).catch(() => null)) !== null);
    await expect(
      pool.send({
        type: 'startRecording',
        sessionId: 'a',
        recording: { recordingId: 'r5', path, channels: 1 },
      }),
    ).rejects.toThrow(/EEXIST/);
    // Closing the leg ends its recording whole.
    await pool.destroySession('a');
    expect(await first).toMatchObject({ state: 'completed', reason: 'session-closed' });
    expect((await readFile(path)).readUInt32LE(40)).toBe((await first).bytes);
  });
});
