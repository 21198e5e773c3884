import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { decodeTelephoneEvent, encodeTelephoneEvent } from '../../../src/media/dtmf/index.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import type { SessionEvent, StreamForkSpec } from '../../../src/media/worker/protocol.js';
import { RtpPeer, type ReceivedRtp } from '../../support/rtp-peer.js';
import { chunks, concat, strongestFrequency, tone } from '../../support/signal.js';
import { StreamServer } from '../../support/stream-server.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Stream forks in a real media worker: RTP from a plain peer in, a real WebSocket server out,
 * each event checked as strict clients check it, and the server's audio back into the call.
 */
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };
const EVENTS = { payloadType: 101, rate: 8000 };

let pool: MediaWorkerPool | null = null;
let server: StreamServer | null = null;
const peers: RtpPeer[] = [];
const events: [string, SessionEvent][] = [];
const latency = { inbound: 0, playout: 0 };

afterEach(async () => {
  await pool?.close();
  pool = null;
  await server?.close();
  server = null;
  await Promise.all(peers.splice(0).map((p) => p.close()));
  events.length = 0;
  latency.inbound = 0;
  latency.playout = 0;
});

async function setUp(): Promise<{ pool: MediaWorkerPool; server: StreamServer; phone: RtpPeer }> {
  const base = 20000 + 2 * Math.floor(Math.random() * 10000);
  pool = new MediaWorkerPool(
    {
      onEvent: (sessionId, event) => events.push([sessionId, event]),
      onLatency: (report) => {
        latency.inbound += report.inbound.count;
        latency.playout += report.playout.count;
      },
    },
    {
      size: 1,
      settings: {
        rtpPorts: { min: base, max: base + 199 },
        rtpHost: '127.0.0.1',
        cname: 'stream-fork-test',
      },
    },
  );
  server = await StreamServer.start();
  const phone = await RtpPeer.open(0x2000 + peers.length);
  peers.push(phone);
  return { pool, server, phone };
}

function fork(url: string, extra: Partial<StreamForkSpec> = {}): StreamForkSpec {
  return {
    streamId: randomUUID(),
    callId: randomUUID(),
    accountId: 'MAXXXXXXXXXXXXXXXXXX',
    serviceUrl: url,
    headers: { 'X-Test': 'yes' },
    extraHeaders: 'team=blue,tier=gold',
    tracks: ['inbound'],
    encoding: 'l16',
    rate: 8000,
    bidirectional: false,
    timeoutMs: 60_000,
    noiseCancellationLevel: null,
    ...extra,
  };
}

/** A call leg on a fresh worker, streamed to the test's server; resolves once `start` came. */
async function streaming(extra: Partial<StreamForkSpec> = {}) {
  const { pool, server, phone } = await setUp();
  const session = await pool.createSession('call', { formats: [PCMU], remote: phone.address });
  const spec = fork(server.url, extra);
  await pool.send({ type: 'startStream', sessionId: 'call', stream: spec });
  const ws = await server.connection();
  await until(() => ws.of('start').length === 1);
  return { pool, server, phone, session, spec, ws };
}

const news = (streamId: string) =>
  events
    .map(([, e]) => e)
    .filter((e): e is Extract<SessionEvent, { type: 'stream' }> => e.type === 'stream')
    .filter((e) => e.streamId === streamId);

const l16 = (payloads: Buffer[]): Int16Array =>
  concat(
    payloads.map((p) => {
      const out = new Int16Array(p.length / 2);
      for (let i = 0; i < out.length; i++) out[i] = p.readInt16LE(i * 2);
      return out;
    }),
  );

const toL16 = (pcm: Int16Array): Buffer => {
  const out = Buffer.alloc(pcm.length * 2);
  pcm.forEach((v, i) => out.writeInt16LE(v, i * 2));
  return out;
};

const audioOf = (packets: ReceivedRtp[]): Int16Array =>
  concat(packets.filter((p) => p.payloadType === 0).map((p) => muLawDecode(p.payload)));

const frames = (pcm: Int16Array): Uint8Array[] => [...chunks(pcm, [160])].map(muLawEncode);

/** The other party of the streamed call: a leg of its own, relayed undecoded to and from it. */
async function relayedParty(pool: MediaWorkerPool) {
  const caller = await RtpPeer.open(0x3000);
  peers.push(caller);
  const a = await pool.createSession(
    'a',
    { formats: [PCMU], remote: caller.address },
    { near: 'call' },
  );
  await pool.send({ type: 'bridge', sessionId: 'a', peerId: 'call', mode: 'relay' });
  return { caller, a };
}

describe('a stream fork', () => {
  it('sends start and the inbound track at 16 kHz L16, with the tone the caller sent', async () => {
    const { pool, server, phone } = await setUp();
    const session = await pool.createSession('call', {
      formats: [PCMU],
      telephoneEvent: EVENTS,
      remote: phone.address,
    });
    const spec = fork(server.url, { rate: 16000 });
    await pool.send({ type: 'startStream', sessionId: 'call', stream: spec });
    const ws = await server.connection();
    expect(ws.request.headers['x-test']).toBe('yes');
    await until(() => news(spec.streamId).some((n) => n.state === 'connected'));
    await phone.stream(session.port, frames(tone(8000, 1004, 1, 8000)), { payloadType: 0 });
    await until(() => ws.of('media').length >= 50);
    // Each of the 50 packets went out as it arrived, its latency on the worker's histogram.
    await until(() => latency.inbound >= 50, 3000);
    expect(latency.inbound).toBe(50);
    const start = ws.of('start')[0]!;
    expect(start).toMatchObject({
      sequenceNumber: 1,
      start: {
        callId: spec.callId,
        streamId: spec.streamId,
        accountId: spec.accountId,
        tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-l16', sampleRate: 16000 },
      },
      extra_headers: 'team=blue,tier=gold',
    });
    const heard = l16(ws.payloads('inbound'));
    // 20 ms at 16 kHz in every frame, and the tone in them.
    for (const p of ws.payloads('inbound')) expect(p.length).toBe(640);
    expect(Math.abs(strongestFrequency(heard.subarray(4000, 8000), 16000, 10) - 1004)).toBeLessThan(
      20,
    );
    expect(ws.violations).toEqual([]);

    const stopped = await pool.send({
      type: 'stopStream',
      sessionId: 'call',
      streamId: spec.streamId,
    });
    expect(stopped.existed).toBe(true);
    await until(() => ws.closed !== null);
    expect(ws.closed?.code).toBe(1000);
    expect(ws.events.at(-1)).toMatchObject({ event: 'stop', streamId: spec.streamId });
    expect(news(spec.streamId).at(-1)).toMatchObject({ state: 'stopped' });
  });

  it('sends both tracks as mu-law: what the caller says and what the call plays to them', async () => {
    const { pool, phone, session, ws } = await streaming({
      tracks: ['inbound', 'outbound'],
      encoding: 'mulaw',
    });
    const playing = pool.send({
      type: 'play',
      sessionId: 'call',
      source: { kind: 'tone', frequencies: [600], durationMs: 1000 },
    });
    await phone.stream(session.port, frames(tone(8000, 1004, 1, 8000)), { payloadType: 0 });
    await playing;
    await until(() => ws.payloads('outbound').length >= 50);
    const inbound = concat(ws.payloads('inbound').map((p) => muLawDecode(p)));
    const outbound = concat(ws.payloads('outbound').map((p) => muLawDecode(p)));
    expect(Math.abs(strongestFrequency(inbound.subarray(2000), 8000, 10) - 1004)).toBeLessThan(20);
    expect(Math.abs(strongestFrequency(outbound.subarray(0, 6000), 8000, 10) - 600)).toBeLessThan(
      20,
    );
    expect(ws.of('start')[0]).toMatchObject({
      start: { tracks: ['inbound', 'outbound'], mediaFormat: { encoding: 'audio/x-mulaw' } },
    });
    expect(ws.violations).toEqual([]);
  });

  it('plays the server audio at real time however fast it came, and reports a checkpoint only once played', async () => {
    const { phone, spec, ws } = await streaming({ bidirectional: true });
    const sent = Date.now();
    // One second of 600 Hz at 24 kHz in five chunks at once, the rate as a string.
    for (const part of chunks(tone(24000, 600, 1, 8000), [4800])) {
      ws.send({
        event: 'playAudio',
        media: {
          contentType: 'audio/x-l16',
          sampleRate: '24000',
          payload: toL16(part).toString('base64'),
        },
      });
    }
    ws.send({ event: 'checkpoint', streamId: spec.streamId, name: 'greeting done' });
    await until(() => ws.of('playedStream').length === 1, 5000);
    const elapsed = Date.now() - sent;
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(ws.of('playedStream')[0]).toMatchObject({
      streamId: spec.streamId,
      name: 'greeting done',
    });
    const heard = audioOf(phone.received);
    expect(Math.abs(strongestFrequency(heard, 8000, 10) - 600)).toBeLessThan(20);
    // The audio started a talkspurt the moment it came, not at the next tick: its first packet
    // is marked, and each chunk's start was timed into the playout histogram.
    const first = phone.received.findIndex(
      (p) => p.payloadType === 0 && p.payload.some((b) => b !== 0xff),
    );
    expect(phone.received[first]!.marker).toBe(true);
    await until(() => latency.playout === 5, 3000);
    expect(ws.violations).toEqual([]);
  });

  it('lets the relayed audio of a bridged leg through while its server is quiet, and plays its server over it when it speaks', async () => {
    const { pool, phone, ws } = await streaming({ bidirectional: true });
    const { caller, a } = await relayedParty(pool);
    // The other party speaks: relayed undecoded to the streamed leg's phone, the bot quiet.
    const said = [...chunks(tone(8000, 1004, 0.4, 8000), [160])].map(muLawEncode);
    const before = phone.received.length;
    await caller.stream(a.port, said, { payloadType: 0 });
    await until(() => phone.received.length - before >= said.length, 3000);
    const relayed = phone.received.slice(before).map((p) => Buffer.from(p.payload).toString('hex'));
    for (const frame of said) expect(relayed).toContain(Buffer.from(frame).toString('hex'));
    // The bot speaks: its audio goes to the phone instead of the relayed packets.
    const spoken = phone.received.length;
    ws.send({
      event: 'playAudio',
      media: {
        contentType: 'audio/x-mulaw',
        sampleRate: 8000,
        payload: muLawEncode(tone(8000, 600, 0.5, 8000)).toString('base64'),
      },
    });
    await until(() => phone.received.length - spoken >= 25, 3000);
    const heard = audioOf(phone.received.slice(spoken));
    expect(Math.abs(strongestFrequency(heard, 8000, 10) - 600)).toBeLessThan(20);
  });

  it('sends the other party on the outbound track of a leg it is relayed to undecoded', async () => {
    const { pool, phone, session, ws } = await streaming({
      tracks: ['inbound', 'outbound'],
      encoding: 'mulaw',
    });
    const { caller, a } = await relayedParty(pool);
    // The streamed leg's phone says 400 Hz, the other party 1004 Hz, relayed to the phone.
    const before = ws.payloads('outbound').length;
    await Promise.all([
      phone.stream(session.port, frames(tone(8000, 400, 1, 8000)), { payloadType: 0 }),
      caller.stream(a.port, frames(tone(8000, 1004, 1, 8000)), { payloadType: 0 }),
    ]);
    await until(() => ws.payloads('outbound').length - before >= 50, 3000);
    const outbound = concat(
      ws
        .payloads('outbound')
        .slice(before)
        .map((p) => muLawDecode(p)),
    );
    const inbound = concat(ws.payloads('inbound').map((p) => muLawDecode(p)));
    // What the phone heard is what the outbound track carries: the other party, not silence.
    expect(
      Math.abs(strongestFrequency(outbound.subarray(1600, 6400), 8000, 10) - 1004),
    ).toBeLessThan(20);
    expect(Math.abs(strongestFrequency(inbound.subarray(2000), 8000, 10) - 400)).toBeLessThan(20);
    expect(ws.violations).toEqual([]);
  });

  it('sends audio arriving every 20 ms as it arrives, never more than a packet per 20 ms', async () => {
    const { phone, ws } = await streaming({ bidirectional: true });
    const before = phone.received.length;
    const started = Date.now();
    const parts = [...chunks(tone(8000, 600, 1, 8000), [160])];
    for (let i = 0; i < parts.length; i++) {
      const wait = started + i * 20 - Date.now();
      if (wait > 0) await sleep(wait);
      ws.send({
        event: 'playAudio',
        media: {
          contentType: 'audio/x-mulaw',
          sampleRate: 8000,
          payload: muLawEncode(parts[i]!).toString('base64'),
        },
      });
    }
    await sleep(500 - (Date.now() - started - 1000));
    const window = phone.received.slice(before);
    const seconds = (Date.now() - started) / 1000;
    // 50 packets a second whatever drives them (the ticks, or the audio as it arrives).
    expect(Math.abs(window.length - seconds * 50)).toBeLessThanOrEqual(3);
    const timestamps = window.map((p) => p.timestamp);
    for (let i = 1; i < timestamps.length; i++) {
      expect((timestamps[i]! - timestamps[i - 1]!) >>> 0).toBe(160);
    }
    await until(() => latency.playout === 50, 3000);
    const heard = audioOf(window);
    expect(Math.abs(strongestFrequency(heard.subarray(0, 2000), 8000, 10) - 600)).toBeLessThan(20);
    expect(ws.violations).toEqual([]);
  });

  it('clears the queue at once on clearAudio and never reports the checkpoints cleared with it', async () => {
    const { phone, spec, ws } = await streaming({ bidirectional: true });
    ws.send({
      event: 'playAudio',
      media: {
        contentType: 'audio/x-mulaw',
        sampleRate: 8000,
        payload: muLawEncode(tone(8000, 600, 5, 8000)).toString('base64'),
      },
    });
    ws.send({ event: 'checkpoint', name: 'never' });
    await sleep(500);
    const clearedAt = phone.received.length;
    ws.send({ event: 'clearAudio', streamId: spec.streamId });
    await until(() => ws.of('clearedAudio').length === 1);
    await sleep(300);
    // Within a frame or two of the clear, the call hears silence.
    const after = audioOf(phone.received.slice(clearedAt + 3));
    const loud = after.reduce((n, v) => (Math.abs(v) > 500 ? n + 1 : n), 0);
    expect(loud).toBe(0);
    expect(
      Math.abs(strongestFrequency(audioOf(phone.received.slice(0, clearedAt)), 8000, 10) - 600),
    ).toBeLessThan(20);
    await sleep(200);
    expect(ws.of('playedStream')).toEqual([]);
    expect(ws.violations).toEqual([]);
  });

  it('suppresses noise on the inbound track of a stream that asks for it, and only there', async () => {
    const { pool, server, phone } = await setUp();
    const session = await pool.createSession('call', { formats: [PCMU], remote: phone.address });
    const clean = fork(server.url, { noiseCancellationLevel: 95 });
    const raw = fork(server.url);
    await pool.send({ type: 'startStream', sessionId: 'call', stream: clean });
    await pool.send({ type: 'startStream', sessionId: 'call', stream: raw });
    const [a, b] = [await server.connection(0), await server.connection(1)];
    await until(() => a.of('start').length === 1 && b.of('start').length === 1);
    const streamOf = (ws: typeof a) => (ws.of('start')[0]!.start as { streamId: string }).streamId;
    const [denoised, plain] = streamOf(a) === clean.streamId ? [a, b] : [b, a];
    // Two seconds of steady white noise from the caller (a seeded generator).
    let seed = 12345;
    const noise = Int16Array.from({ length: 16000 }, () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return Math.round(((seed / 0x7fffffff) * 2 - 1) * 3000);
    });
    await phone.stream(session.port, frames(noise), { payloadType: 0 });
    await until(() => denoised.of('media').length >= 100 && plain.of('media').length >= 100);
    expect(streamOf(plain)).toBe(raw.streamId);
    const rmsDb = (pcm: Int16Array) => {
      let sum = 0;
      for (const v of pcm) sum += v * v;
      return 10 * Math.log10(sum / pcm.length + 1e-9);
    };
    // The second second: the suppressor has learnt the noise by then.
    const tail = (ws: typeof denoised) => {
      const pcm = l16(ws.payloads('inbound'));
      return pcm.subarray(pcm.length - 8000);
    };
    expect(rmsDb(tail(plain)) - rmsDb(tail(denoised))).toBeGreaterThan(10);
    expect(denoised.violations).toEqual([]);
  });

  it('passes digits both ways: the caller RFC 4733 as dtmf events, sendDTMF into the call', async () => {
    const { pool, server, phone } = await setUp();
    const session = await pool.createSession('call', {
      formats: [PCMU],
      telephoneEvent: EVENTS,
      remote: phone.address,
    });
    const spec = fork(server.url, { bidirectional: true });
    await pool.send({ type: 'startStream', sessionId: 'call', stream: spec });
    const ws = await server.connection();
    await until(() => ws.of('start').length === 1);
    const start = phone.nextTimestamp;
    for (let i = 0; i < 5; i++) {
      const end = i === 4;
      const payload = encodeTelephoneEvent({ event: 5, end, volume: 10, duration: (i + 1) * 160 });
      for (let copy = 0; copy < (end ? 3 : 1); copy++) {
        phone.send(session.port, payload, { payloadType: 101, marker: i === 0, timestamp: start });
      }
      await sleep(20);
    }
    await until(() => ws.of('dtmf').length === 1);
    expect(ws.of('dtmf')[0]).toMatchObject({
      streamId: spec.streamId,
      dtmf: { track: 'inbound', digit: '5' },
    });
    ws.send({ event: 'sendDTMF', dtmf: '7#' });
    await until(() => {
      const ends = phone.received
        .filter((p) => p.payloadType === 101)
        .map((p) => decodeTelephoneEvent(p.payload))
        .filter((e) => e.end);
      return new Set(ends.map((e) => e.event)).size === 2;
    }, 5000);
    expect(ws.violations).toEqual([]);
  });

  it('answers what it cannot act on with an error event, and goes on', async () => {
    const { ws } = await streaming();
    ws.socket.send('not json');
    ws.send({ event: 'dance' });
    ws.send({
      event: 'playAudio',
      media: { contentType: 'audio/x-l16', sampleRate: 8000, payload: 'AAAA' },
    });
    ws.send({ event: 'checkpoint', streamId: randomUUID(), name: 'x' });
    await until(() => ws.of('error').length === 4);
    const errors = ws.of('error').map((e) => String(e.error));
    expect(errors[0]).toMatch(/does not parse/);
    expect(errors[1]).toMatch(/playAudio, checkpoint, clearAudio or sendDTMF/);
    expect(errors[2]).toMatch(/only in a bidirectional stream/);
    expect(errors[3]).toMatch(/not this stream's/);
    const mediaBefore = ws.of('media').length;
    await until(() => ws.of('media').length > mediaBefore + 5);
    expect(ws.violations).toEqual([]);
  });

  it('fails after three connection attempts, and when the server closes mid-stream', async () => {
    const { pool, server, phone } = await setUp();
    await pool.createSession('call', { formats: [PCMU], remote: phone.address });
    const closedPort = server.port;
    await server.close();
    const nowhere = fork(`ws://127.0.0.1:${closedPort}/gone?token=s3cret`);
    await pool.send({ type: 'startStream', sessionId: 'call', stream: nowhere });
    await until(() => news(nowhere.streamId).length > 0, 5000);
    // Why the last attempt failed is told; the URL's query (a token, say) is not.
    expect(news(nowhere.streamId)).toEqual([
      expect.objectContaining({
        state: 'failed',
        message: `could not connect to ws://127.0.0.1:${closedPort}/gone in 3 attempts (the last: connect ECONNREFUSED 127.0.0.1:${closedPort})`,
      }),
    ]);

    const other = await StreamServer.start();
    try {
      const spec = fork(other.url);
      await pool.send({ type: 'startStream', sessionId: 'call', stream: spec });
      const ws = await other.connection();
      await until(() => ws.of('media').length > 3);
      ws.socket.close(1011, 'going away');
      await until(() => news(spec.streamId).some((n) => n.state === 'failed'));
      expect(news(spec.streamId).at(-1)).toMatchObject({
        state: 'failed',
        message: expect.stringMatching(/closed the connection \(1011: going away\)/),
      });
      // The call's media carries on.
      const stats = await pool.send({ type: 'sessionStats', sessionId: 'call' });
      expect(stats.packetsSent).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });

  it('closes a server connection that sends a message over 4 MiB, and the call carries on', async () => {
    const { pool, spec, ws } = await streaming({ bidirectional: true });
    ws.send({
      event: 'playAudio',
      media: {
        contentType: 'audio/x-l16',
        sampleRate: 8000,
        payload: 'A'.repeat(5 * 1024 * 1024),
      },
    });
    await until(() => news(spec.streamId).some((n) => n.state === 'failed'));
    expect(news(spec.streamId).at(-1)).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(
        /a message over 4194304 bytes; the connection was closed \(1009\)/,
      ),
    });
    const stats = await pool.send({ type: 'sessionStats', sessionId: 'call' });
    expect(stats.packetsSent).toBeGreaterThan(0);
  });

  it('reports a server that stops reading as degraded, then drops it, while another stream keeps its timing', async () => {
    const { pool, server, phone } = await setUp();
    const slowLeg = await pool.createSession('slow', { formats: [PCMU], remote: phone.address });
    const other = await RtpPeer.open(0x3000);
    peers.push(other);
    const fineLeg = await pool.createSession('fine', { formats: [PCMU], remote: other.address });
    const slow = fork(server.url, {
      tracks: ['inbound', 'outbound'],
      rate: 24000,
      sendBufferBytes: 128 * 1024,
    });
    await pool.send({ type: 'startStream', sessionId: 'slow', stream: slow });
    const stalled = await server.connection(0);
    const fine = fork(server.url);
    await pool.send({ type: 'startStream', sessionId: 'fine', stream: fine });
    const healthy = await server.connection(1);
    await until(() => stalled.of('start').length === 1 && healthy.of('start').length === 1);
    stalled.stopReading();
    const from = Date.now();
    const mediaBefore = healthy.of('media').length;
    const packetsBefore = other.received.length;
    // Both callers talk; the stalled server's buffer fills with the first one's audio.
    const talking = Promise.all([
      phone.stream(slowLeg.port, frames(tone(8000, 1004, 5, 8000)), { payloadType: 0 }),
      other.stream(fineLeg.port, frames(tone(8000, 600, 5, 8000)), { payloadType: 0 }),
    ]);
    await until(() => news(slow.streamId).some((n) => n.state === 'dropped'), 15_000);
    const seconds = (Date.now() - from) / 1000;
    expect(news(slow.streamId).map((n) => n.state)).toEqual([
      'connected',
      'degraded',
      'degraded',
      'degraded',
      'dropped',
    ]);
    expect(news(slow.streamId).filter((n) => n.state === 'degraded')).toEqual([
      expect.objectContaining({ percent: 30 }),
      expect.objectContaining({ percent: 60 }),
      expect.objectContaining({ percent: 90 }),
    ]);
    expect(news(slow.streamId).at(-1)).toMatchObject({
      message: expect.stringMatching(/did not read fast enough/),
    });
    // Meanwhile the other stream got its frame every 20 ms, and its caller its RTP.
    const media = healthy.of('media').length - mediaBefore;
    expect(Math.abs(media - seconds * 50)).toBeLessThanOrEqual(5);
    const packets = other.received.length - packetsBefore;
    expect(Math.abs(packets - seconds * 50)).toBeLessThanOrEqual(5);
    expect(healthy.violations).toEqual([]);
    expect(news(fine.streamId).map((n) => n.state)).toEqual(['connected']);
    await talking;
  }, 30_000);

  it('ends with timeout after its stream_timeout, with a stop event', async () => {
    const { pool, server, phone } = await setUp();
    await pool.createSession('call', { formats: [PCMU], remote: phone.address });
    const spec = fork(server.url, { timeoutMs: 400 });
    await pool.send({ type: 'startStream', sessionId: 'call', stream: spec });
    const ws = await server.connection();
    await until(() => ws.closed !== null, 3000);
    expect(ws.events.at(-1)).toMatchObject({ event: 'stop' });
    // The worker's news can reach this thread a turn after the server saw the close.
    await until(() => news(spec.streamId).at(-1)?.state !== 'connected', 3000);
    expect(news(spec.streamId).at(-1)).toMatchObject({ state: 'timeout' });
  });
});
