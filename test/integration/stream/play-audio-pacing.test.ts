import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { muLawEncode } from '../../../src/media/codec/g711.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import { RtpPeer, type ReceivedRtp } from '../../support/rtp-peer.js';
import { chunks, tone } from '../../support/signal.js';
import { StreamServer, type StreamConnection } from '../../support/stream-server.js';
import { sleep, until } from '../../support/wait.js';

/**
 * A voice-AI server streaming its speech frame by frame: playAudio in chunks of 20 ms or less
 * (or odd sizes), sent far faster than real time, into a real media worker whose call's RTP
 * goes to a plain peer. The call must hear the audio at real time, whole, joined across the
 * chunks; checkpoints come once it has been played; the 40 s bound holds whatever the chunks.
 */
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };
const MULAW_SILENCE = 0xff;

let pool: MediaWorkerPool | null = null;
let server: StreamServer | null = null;
const peers: RtpPeer[] = [];

afterEach(async () => {
  await pool?.close();
  pool = null;
  await server?.close();
  server = null;
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

/** A call leg on a fresh worker with a bidirectional stream to the test's server. */
async function streaming(): Promise<{ phone: RtpPeer; ws: StreamConnection; streamId: string }> {
  const base = 20000 + 2 * Math.floor(Math.random() * 10000);
  pool = new MediaWorkerPool(
    { onEvent: () => {} },
    {
      size: 1,
      settings: { rtpPorts: { min: base, max: base + 99 }, rtpHost: '127.0.0.1', cname: 'pacing' },
    },
  );
  server = await StreamServer.start();
  const phone = await RtpPeer.open();
  peers.push(phone);
  await pool.createSession('call', { formats: [PCMU], remote: phone.address });
  const streamId = randomUUID();
  await pool.send({
    type: 'startStream',
    sessionId: 'call',
    stream: {
      streamId,
      callId: randomUUID(),
      accountId: 'MAXXXXXXXXXXXXXXXXXX',
      serviceUrl: server.url,
      headers: {},
      extraHeaders: '',
      tracks: ['inbound'],
      encoding: 'mulaw',
      rate: 8000,
      bidirectional: true,
      timeoutMs: 120_000,
      noiseCancellationLevel: null,
    },
  });
  const ws = await server.connection();
  await until(() => ws.of('start').length === 1);
  return { phone, ws, streamId };
}

/** Sends `parts` as playAudio (mu-law, 8 kHz), one message each, as fast as the socket takes. */
function playAudio(ws: StreamConnection, parts: Iterable<Int16Array>): void {
  for (const part of parts) {
    ws.send({
      event: 'playAudio',
      media: {
        contentType: 'audio/x-mulaw',
        sampleRate: '8000',
        payload: muLawEncode(part).toString('base64'),
      },
    });
  }
}

/** The packets that carry sound (a silence frame is all mu-law zero). */
const sounding = (packets: readonly ReceivedRtp[]): ReceivedRtp[] =>
  packets.filter((p) => p.payloadType === 0 && p.payload.some((b) => b !== MULAW_SILENCE));

/** The peer's sounding packets when the server got its first playedStream. */
function soundingAtCheckpoint(ws: StreamConnection, phone: RtpPeer): { count: number | null } {
  const seen = { count: null as number | null };
  ws.socket.on('message', (data) => {
    const event = JSON.parse(data.toString()) as { event: string };
    if (event.event === 'playedStream' && seen.count === null) {
      seen.count = sounding(phone.received).length;
    }
  });
  return seen;
}

/** Asserts the call heard `pcm` whole, in order, at real time, on contiguous timestamps. */
function expectHeardAtRealTime(phone: RtpPeer, pcm: Int16Array): ReceivedRtp[] {
  const heard = sounding(phone.received);
  expect(heard).toHaveLength(pcm.length / 160);
  expect(Buffer.concat(heard.map((p) => p.payload))).toEqual(muLawEncode(pcm));
  for (let i = 1; i < heard.length; i++) {
    expect((heard[i]!.timestamp - heard[i - 1]!.timestamp) >>> 0).toBe(160);
    expect(heard[i]!.sequenceNumber).toBe((heard[i - 1]!.sequenceNumber + 1) & 0xffff);
  }
  // 4 s of audio spans about 4 s at the phone, however fast it came.
  const span = heard.at(-1)!.at - heard[0]!.at;
  expect(span).toBeGreaterThanOrEqual(3500);
  return heard;
}

describe('playAudio in small chunks', () => {
  it('plays 4 s sent as 200 chunks of 20 ms at real time, and reports the checkpoint after it', async () => {
    const { phone, ws, streamId } = await streaming();
    const checkpointed = soundingAtCheckpoint(ws, phone);
    const pcm = tone(8000, 600, 4, 8000);
    const sentAt = Date.now();
    playAudio(ws, chunks(pcm, [160]));
    ws.send({ event: 'checkpoint', streamId, name: 'said' });
    await until(() => ws.of('playedStream').length === 1, 8000);
    const checkpointMs = Date.now() - sentAt;
    await sleep(200);
    expectHeardAtRealTime(phone, pcm);
    // The checkpoint came once the audio had been played: all of it but the frame going out
    // with it had reached the phone, and it took about the audio's length.
    expect(checkpointed.count).toBeGreaterThanOrEqual(199);
    expect(checkpointMs).toBeGreaterThanOrEqual(3500);
    expect(ws.of('playedStream')[0]).toMatchObject({ streamId, name: 'said' });
    expect(ws.of('error')).toEqual([]);
    expect(ws.violations).toEqual([]);
  });

  it('joins chunks of 7 and 30 ms into whole frames: 4 s arrives complete, at real time', async () => {
    const { phone, ws, streamId } = await streaming();
    const checkpointed = soundingAtCheckpoint(ws, phone);
    const pcm = tone(8000, 440, 4, 8000);
    playAudio(ws, chunks(pcm, [56, 240]));
    ws.send({ event: 'checkpoint', streamId, name: 'said' });
    await until(() => ws.of('playedStream').length === 1, 8000);
    await sleep(200);
    expectHeardAtRealTime(phone, pcm);
    expect(checkpointed.count).toBeGreaterThanOrEqual(199);
    expect(ws.of('error')).toEqual([]);
    expect(ws.violations).toEqual([]);
  });

  it('queues at most 40 s of 20 ms chunks, refusing the rest with an error, and clears at once', async () => {
    const { phone, ws, streamId } = await streaming();
    // 50 s of audio in 2500 chunks of 20 ms, then a checkpoint that the clear cancels.
    const frame = tone(8000, 600, 0.02, 8000);
    playAudio(
      ws,
      Array.from({ length: 2500 }, () => frame),
    );
    ws.send({ event: 'checkpoint', streamId, name: 'never' });
    ws.send({ event: 'clearAudio', streamId });
    // clearedAudio follows every playAudio before it: each was taken or refused by then.
    await until(() => ws.of('clearedAudio').length === 1, 8000);
    const playedBeforeClear = sounding(phone.received).length;
    const refused = ws.of('error');
    for (const error of refused) {
      expect(error.error).toBe(
        'the playout queue holds at most 40 s of audio; this chunk of 0.02 s was dropped',
      );
    }
    // The first frame went at once and 40 s (2000 frames) waited behind it; whatever else was
    // taken fitted in the room the frames played meanwhile made.
    const taken = 2500 - refused.length;
    expect(taken).toBeGreaterThanOrEqual(2001);
    expect(taken).toBeLessThanOrEqual(2001 + playedBeforeClear);
    // The clear emptied the queue: within a frame or two the phone hears silence.
    const clearedAt = phone.received.length;
    await sleep(300);
    expect(sounding(phone.received.slice(clearedAt + 2))).toEqual([]);
    expect(ws.of('playedStream')).toEqual([]);
    expect(ws.violations).toEqual([]);
  });
});
