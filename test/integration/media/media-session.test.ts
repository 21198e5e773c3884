import { afterEach, describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { OpusDecoder, OpusEncoder } from '../../../src/media/codec/opus.js';
import { decodeTelephoneEvent, encodeTelephoneEvent } from '../../../src/media/dtmf/index.js';
import type { MediaSessionSpec } from '../../../src/media/pipeline/session-spec.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import type { SessionEvent } from '../../../src/media/worker/protocol.js';
import { RtpPeer, type ReceivedRtp } from '../../support/rtp-peer.js';
import {
  chunks,
  concat,
  powerAt,
  sineSnrDb,
  strongestFrequency,
  tone,
} from '../../support/signal.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Media sessions in real worker threads, on real UDP sockets, against plain RTP peers: audio
 * in one leg and out of the other, speech, digits both ways, timeouts, hold and crashes.
 */
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };
const EVENTS = { payloadType: 101, rate: 8000 };

let pool: MediaWorkerPool | null = null;
const peers: RtpPeer[] = [];
const events: [string, SessionEvent][] = [];

afterEach(async () => {
  await pool?.close();
  pool = null;
  await Promise.all(peers.splice(0).map((p) => p.close()));
  events.length = 0;
});

function startPool(size = 2, pairs = 100): MediaWorkerPool {
  const base = 20000 + 2 * Math.floor(Math.random() * 10000);
  pool = new MediaWorkerPool(
    { onEvent: (sessionId, event) => events.push([sessionId, event]) },
    {
      size,
      settings: {
        rtpPorts: { min: base, max: base + 2 * pairs - 1 },
        rtpHost: '127.0.0.1',
        cname: 'media-session-test',
      },
    },
  );
  return pool;
}

async function peer(): Promise<RtpPeer> {
  const p = await RtpPeer.open(0x1000 + peers.length);
  peers.push(p);
  return p;
}

const spec = (p: RtpPeer, extra: Partial<MediaSessionSpec> = {}): MediaSessionSpec => ({
  formats: [PCMU],
  telephoneEvent: EVENTS,
  remote: p.address,
  ...extra,
});

const audioOf = (packets: ReceivedRtp[]): Int16Array =>
  concat(packets.filter((p) => p.payloadType === 0).map((p) => muLawDecode(p.payload)));

const frames = (pcm: Int16Array): Uint8Array[] => [...chunks(pcm, [160])].map(muLawEncode);

const eventsOf = (sessionId: string, type: SessionEvent['type']) =>
  events.filter(([id, e]) => id === sessionId && e.type === type).map(([, e]) => e);

describe('media sessions in worker threads', () => {
  it('carries a tone from each leg of a bridge to the other', async () => {
    const pool = startPool();
    const [alice, bob] = [await peer(), await peer()];
    const a = await pool.createSession('a', spec(alice));
    const b = await pool.createSession('b', spec(bob), { near: 'a' });
    expect(a.port % 2).toBe(0);
    expect(a.rtcpPort).toBe(a.port + 1);
    expect(pool.threadOf('b')).toBe(pool.threadOf('a'));
    await pool.send({ type: 'bridge', sessionId: 'a', peerId: 'b' });

    await Promise.all([
      alice.stream(a.port, frames(tone(8000, 1004, 1.5, 8000)), { payloadType: 0 }),
      bob.stream(b.port, frames(tone(8000, 600, 1.5, 8000)), { payloadType: 0 }),
    ]);
    await sleep(200);

    const atBob = audioOf(bob.received);
    const atAlice = audioOf(alice.received);
    // Skip the start (jitter buffer filling) and judge a second of what came through.
    const heardByBob = atBob.subarray(atBob.findIndex((s) => Math.abs(s) > 2000) + 800);
    const heardByAlice = atAlice.subarray(atAlice.findIndex((s) => Math.abs(s) > 2000) + 800);
    expect(heardByBob.length).toBeGreaterThan(4000);
    expect(strongestFrequency(heardByBob.subarray(0, 4000), 8000, 2)).toBe(1004);
    expect(sineSnrDb(heardByBob.subarray(0, 4000), 8000, 1004)).toBeGreaterThan(30);
    expect(strongestFrequency(heardByAlice.subarray(0, 4000), 8000, 2)).toBe(600);

    // The packets are well formed: one SSRC, sequence +1 and timestamp +160 each, PCMU.
    const sent = bob.received;
    expect(new Set(sent.map((p) => p.ssrc)).size).toBe(1);
    expect(sent[0]!.marker).toBe(true);
    for (let i = 1; i < sent.length; i++) {
      expect((sent[i]!.sequenceNumber - sent[i - 1]!.sequenceNumber) & 0xffff).toBe(1);
      expect((sent[i]!.timestamp - sent[i - 1]!.timestamp) >>> 0).toBe(160);
    }
  });

  it('relays RTP undecoded between legs that share a codec, keeping its timing', async () => {
    const pool = startPool(1);
    const [alice, bob] = [await peer(), await peer()];
    const a = await pool.createSession('a', spec(alice));
    await pool.createSession('b', spec(bob, { formats: [{ ...PCMU, payloadType: 0 }] }), {
      near: 'a',
    });
    await pool.send({ type: 'bridge', sessionId: 'a', peerId: 'b', mode: 'relay' });
    const sent = frames(tone(8000, 1004, 0.4, 8000));
    // Every fourth packet lost on the way in: the timestamps out keep the gap.
    for (let i = 0; i < sent.length; i++) {
      if (i % 4 === 3) alice.lose();
      else alice.send(a.port, sent[i]!, { payloadType: 0, samples: 160, marker: i === 0 });
    }
    await until(() => bob.received.length >= 15);
    await sleep(100);
    // Nothing but the relayed packets reached Bob: no silence of Bob's own leg in between.
    const out = bob.received;
    expect(out.map((p) => [...p.payload])).toEqual(
      sent.filter((_, i) => i % 4 !== 3).map((p) => [...p]),
    );
    expect((out[3]!.timestamp - out[2]!.timestamp) >>> 0).toBe(320);
    expect(out[0]!.marker).toBe(true);
    const stats = await pool.send({ type: 'sessionStats', sessionId: 'b' });
    expect(stats.relayDropped).toBe(0);
  });

  it('relays Opus undecoded across payload types, and mixes it into what the far leg plays', async () => {
    const pool = startPool(1);
    const [alice, bob] = [await peer(), await peer()];
    const opus = (payloadType: number) => ({
      formats: [{ encoding: 'opus' as const, payloadType, rate: 16000 as const }],
    });
    // Alice offered Opus as 111 (Chromium), Bob as 109 (Firefox).
    const a = await pool.createSession('a', spec(alice, opus(111)));
    await pool.createSession('b', spec(bob, opus(109)), { near: 'a' });
    await pool.send({ type: 'bridge', sessionId: 'a', peerId: 'b', mode: 'relay' });
    const encoder = new OpusEncoder(16000);
    const sent = [...chunks(tone(16000, 1000, 1.6, 8000), [320])].map((f) => encoder.encode(f));
    const streamed = alice.stream(a.port, sent, { payloadType: 111, samples: 960 });
    await sleep(500);
    // Half a second in, Bob's leg plays a tone of its own for 600 ms.
    const played = pool.send({
      type: 'play',
      sessionId: 'b',
      source: { kind: 'tone', frequencies: [600], durationMs: 600 },
    });
    await Promise.all([streamed, played]);
    await sleep(100);

    const out = bob.received.filter((p) => p.payloadType === 109);
    // Before the play, Alice's packets as they were sent, in Bob's payload type.
    const relayed = sent.map((p) => Buffer.from(p).toString('hex'));
    expect(out.slice(0, 10).map((p) => Buffer.from(p.payload).toString('hex'))).toEqual(
      relayed.slice(0, 10),
    );
    // During it, Bob's leg codes its play with what Alice says mixed in: both tones.
    const own = out.filter((p) => !relayed.includes(Buffer.from(p.payload).toString('hex')));
    expect(own.length).toBeGreaterThan(20);
    const decoder = new OpusDecoder(16000);
    const heard = concat(own.slice(3, 23).map((p) => decoder.decode(p.payload)));
    const noise = powerAt(heard, 16000, 800);
    expect(powerAt(heard, 16000, 1000)).toBeGreaterThan(noise * 100);
    expect(powerAt(heard, 16000, 600)).toBeGreaterThan(noise * 100);
    // After it, Alice's packets again.
    expect(relayed).toContain(Buffer.from(out.at(-1)!.payload).toString('hex'));
    const stats = await pool.send({ type: 'sessionStats', sessionId: 'b' });
    expect(stats.relayDropped).toBe(0);
  });

  it('plays speech into a call and says when it is done, or stopped', async () => {
    const pool = startPool(1);
    const phone = await peer();
    await pool.createSession('s', spec(phone));
    const result = await pool.send({
      type: 'play',
      sessionId: 's',
      source: {
        kind: 'speech',
        text: 'Hello, your call is important.',
        voice: 'WOMAN',
        language: 'en-US',
      },
    });
    expect(result).toEqual({ completed: true });
    const heard = audioOf(phone.received);
    const loudest = Math.max(...[...chunks(heard, [160])].map(rms));
    expect(loudest).toBeGreaterThan(1000);

    const looping = pool.send({
      type: 'play',
      sessionId: 's',
      source: { kind: 'tone', frequencies: [440], durationMs: 200 },
      loop: true,
    });
    await sleep(300);
    await pool.send({ type: 'stopPlayback', sessionId: 's' });
    expect(await looping).toEqual({ completed: false });

    // A tag stops what was played with it and nothing else.
    const tone = { kind: 'tone' as const, frequencies: [440], durationMs: 200 };
    const tagged = pool.send({
      type: 'play',
      sessionId: 's',
      source: tone,
      loop: true,
      tag: 'api',
    });
    const untagged = pool.send({ type: 'play', sessionId: 's', source: tone, loop: true });
    await sleep(200);
    await pool.send({ type: 'stopPlayback', sessionId: 's', tag: 'api' });
    expect(await tagged).toEqual({ completed: false });
    const before = phone.received.length;
    const stillPlaying = await Promise.race([
      untagged.then(() => false),
      sleep(300).then(() => true),
    ]);
    expect(stillPlaying).toBe(true);
    const after = audioOf(phone.received.slice(before));
    expect(Math.max(...[...chunks(after, [160])].map(rms))).toBeGreaterThan(1000);
    await pool.send({ type: 'stopPlayback', sessionId: 's' });
    expect(await untagged).toEqual({ completed: false });
  });

  it('reports RFC 4733 digits once each, and sends digit strings with waits', async () => {
    const pool = startPool(1);
    const phone = await peer();
    const s = await pool.createSession('d', spec(phone));
    // Digit 5 as a phone sends it: start, updates, three ends, all with one timestamp.
    const ts = phone.nextTimestamp;
    for (const [duration, end] of [
      [160, false],
      [320, false],
      [480, false],
      [640, true],
      [640, true],
      [640, true],
    ] as const) {
      phone.send(s.port, encodeTelephoneEvent({ event: 5, end, volume: 10, duration }), {
        payloadType: 101,
        timestamp: ts,
        marker: duration === 160,
      });
      await sleep(5);
    }
    await until(() => eventsOf('d', 'dtmf').length > 0);
    await sleep(50);
    expect(eventsOf('d', 'dtmf')).toEqual([
      { type: 'dtmf', digit: '5', source: 'rfc4733', durationMs: 80 },
    ]);

    const started = Date.now();
    expect(await pool.send({ type: 'sendDigits', sessionId: 'd', digits: '1w#' })).toEqual({
      completed: true,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    const sent = phone.received.filter((p) => p.payloadType === 101);
    const byEvent = new Map<number, ReceivedRtp[]>();
    for (const p of sent) byEvent.set(p.timestamp, [...(byEvent.get(p.timestamp) ?? []), p]);
    const digits = [...byEvent.values()].map((packets) => {
      const decoded = packets.map((p) => decodeTelephoneEvent(p.payload));
      expect(packets[0]!.marker).toBe(true);
      expect(decoded.filter((e) => e.end)).toHaveLength(3);
      expect(decoded.at(-1)!.duration).toBe(800);
      return decoded[0]!.event;
    });
    expect(digits).toEqual([1, 11]);
    const [first, second] = [...byEvent.values()].map((packets) => packets[0]!.at);
    expect(second! - first!).toBeGreaterThanOrEqual(650);

    // A re-INVITE moves telephone-event to 48 kHz (as beside Opus): durations count in it.
    await pool.send({
      type: 'updateSession',
      sessionId: 'd',
      changes: { telephoneEvent: { payloadType: 110, rate: 48_000 } },
    });
    const at = phone.nextTimestamp;
    for (const [duration, end] of [
      [960, false],
      [4800, true],
      [4800, true],
    ] as const) {
      phone.send(s.port, encodeTelephoneEvent({ event: 7, end, volume: 10, duration }), {
        payloadType: 110,
        timestamp: at,
        marker: duration === 960,
      });
      await sleep(5);
    }
    await until(() => eventsOf('d', 'dtmf').length > 1);
    expect(eventsOf('d', 'dtmf')[1]).toEqual({
      type: 'dtmf',
      digit: '7',
      source: 'rfc4733',
      durationMs: 100,
    });
  });

  it('hears and sends DTMF tones in the audio when the peer has no telephone-event', async () => {
    const pool = startPool(1);
    const phone = await peer();
    const s = await pool.createSession(
      't',
      spec(phone, { telephoneEvent: null, inbandDtmf: true }),
    );
    const seven = concat([tone(8000, 852, 0.1, 6000), new Int16Array(800)]).map(
      (v, i) => v + (i < 800 ? Math.round(6000 * Math.sin((2 * Math.PI * 1209 * i) / 8000)) : 0),
    );
    await phone.stream(s.port, frames(concat([new Int16Array(800), seven, new Int16Array(1600)])), {
      payloadType: 0,
    });
    await until(() => eventsOf('t', 'dtmf').length > 0);
    expect(eventsOf('t', 'dtmf')).toEqual([{ type: 'dtmf', digit: '7', source: 'inband' }]);

    await pool.send({ type: 'sendDigits', sessionId: 't', digits: '9' });
    expect(phone.received.some((p) => p.payloadType === 101)).toBe(false);
    const heard = audioOf(phone.received);
    const loud = heard.subarray(heard.findIndex((v) => Math.abs(v) > 1000)).subarray(0, 480);
    // 9 is 852 Hz with 1477 Hz.
    const low = strongestFrequency(loud, 8000, 1);
    expect([852, 1477]).toContain(low);
  });

  it('takes digits from RFC 4733 only while the peer has telephone-event, from tones once it has not', async () => {
    const pool = startPool(1);
    const phone = await peer();
    const { port } = await pool.createSession('e', spec(phone, { inbandDtmf: true }));
    // 7 is 852 Hz with 1209 Hz: 100 ms of it, then silence.
    const seven = new Int16Array(2400).map((_, i) =>
      i < 800
        ? Math.round(
            6000 * Math.sin((2 * Math.PI * 852 * i) / 8000) +
              6000 * Math.sin((2 * Math.PI * 1209 * i) / 8000),
          )
        : 0,
    );
    await phone.stream(port, frames(concat([new Int16Array(800), seven])), { payloadType: 0 });
    await sleep(200);
    expect(eventsOf('e', 'dtmf')).toEqual([]);

    await pool.send({ type: 'updateSession', sessionId: 'e', changes: { telephoneEvent: null } });
    await phone.stream(port, frames(concat([new Int16Array(800), seven])), { payloadType: 0 });
    await until(() => eventsOf('e', 'dtmf').length > 0);
    expect(eventsOf('e', 'dtmf')).toEqual([{ type: 'dtmf', digit: '7', source: 'inband' }]);
  });

  it('raises a media timeout, but not while the peer is on hold', async () => {
    const pool = startPool(1);
    const phone = await peer();
    const s = await pool.createSession('m', spec(phone, { mediaTimeoutMs: 300 }));
    await phone.stream(s.port, frames(tone(8000, 440, 0.2, 3000)), { payloadType: 0 });
    await until(() => eventsOf('m', 'mediaTimeout').length > 0, 2000);

    await pool.createSession('h', spec(phone, { mediaTimeoutMs: 300, direction: 'sendonly' }));
    await sleep(600);
    expect(eventsOf('h', 'mediaTimeout')).toEqual([]);
  });

  it('sends nothing while held (recvonly) and resumes when the hold ends', async () => {
    const pool = startPool(1);
    const phone = await peer();
    await pool.createSession('h', spec(phone, { direction: 'recvonly' }));
    await sleep(200);
    expect(phone.received).toHaveLength(0);
    await pool.send({ type: 'updateSession', sessionId: 'h', changes: { direction: 'sendrecv' } });
    await until(() => phone.received.length >= 5);
  });

  it('latches onto where the RTP comes from (symmetric RTP behind NAT)', async () => {
    const pool = startPool(1);
    const [natted, listed] = [await peer(), await peer()];
    const s = await pool.createSession('n', spec(listed));
    await natted.stream(s.port, frames(tone(8000, 440, 0.3, 3000)), { payloadType: 0 });
    await until(() => eventsOf('n', 'latched').length > 0);
    const before = natted.received.length;
    await sleep(100);
    expect(natted.received.length).toBeGreaterThan(before);
    expect(eventsOf('n', 'latched')[0]).toMatchObject({ address: '127.0.0.1', port: natted.port });
  });

  it('refuses bad specs and commands with specific errors', async () => {
    const pool = startPool(1);
    const phone = await peer();
    await expect(
      pool.createSession('x', { formats: [{ ...PCMU, rate: 16000 }], remote: phone.address }),
    ).rejects.toThrow('Expected PCMU at 8000 Hz but received 16000');
    await expect(
      pool.createSession('y', spec(phone, { noiseCancellationLevel: 55 })),
    ).rejects.toThrow(/noiseCancellationLevel/);
    await expect(pool.createSession('z', { formats: [] })).rejects.toThrow(
      'Expected at least one audio format',
    );
    await pool.createSession('ok', spec(phone));
    await expect(pool.send({ type: 'sendDigits', sessionId: 'ok', digits: '12x' })).rejects.toThrow(
      /x/,
    );
    await expect(pool.send({ type: 'stopPlayback', sessionId: 'nope' })).rejects.toThrow(
      'no media session nope',
    );
    await expect(
      pool.send({ type: 'play', sessionId: 'ok', source: { kind: 'file', url: 'ftp://x/y.wav' } }),
    ).rejects.toThrow('Expected an http or https URL');
    // The good session was not disturbed.
    await until(() => phone.received.length > 3);
  });

  it('frees the ports of a crashed worker, and of a closed session', async () => {
    const pool = startPool(1, 1);
    const phone = await peer();
    await pool.createSession('one', spec(phone));
    await expect(pool.createSession('two', spec(phone))).rejects.toThrow(/no free even port pair/);
    await pool.crashWorkerOf('one');
    await until(() => eventsOf('one', 'ended').length > 0);
    await pool.createSession('three', spec(phone));
    expect((await pool.destroySession('three'))?.existed).toBe(true);
    await pool.createSession('four', spec(phone));
  });
});

function rms(pcm: Int16Array): number {
  let sum = 0;
  for (const v of pcm) sum += v * v;
  return Math.sqrt(sum / Math.max(1, pcm.length));
}
