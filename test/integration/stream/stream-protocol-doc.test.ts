import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../../src/callbacks/signature.js';
import { muLawEncode } from '../../../src/media/codec/g711.js';
import { encodeTelephoneEvent } from '../../../src/media/dtmf/index.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import type { StreamForkSpec } from '../../../src/media/worker/protocol.js';
import { readClientMessage } from '../../../src/stream/client-messages.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { chunks, tone } from '../../support/signal.js';
import {
  StreamServer,
  type StreamConnection,
  type StreamEvent,
} from '../../support/stream-server.js';
import { sleep, until } from '../../support/wait.js';

/**
 * docs/stream-protocol.md against the gateway: every JSON message it shows is checked against
 * what a real stream (a media worker, a WebSocket server, RTP from a phone) sends and reads, so
 * the reference cannot drift from the code. Gateway events must have exactly the fields (and
 * their types) of the real event of that name; server messages must pass the real reader; the
 * error table's texts must be the ones the gateway sends for those inputs.
 */
const DOC = readFileSync(new URL('../../../docs/stream-protocol.md', import.meta.url), 'utf8');

type Json = Record<string, unknown>;

/** Every ```json block of the document, each one message. */
function jsonBlocks(doc: string): Json[] {
  return [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as Json);
}

/** The transcript's lines: `>>` the gateway sent, `<<` the server sent. */
function transcript(doc: string): { from: 'gateway' | 'server'; message: Json }[] {
  const block = /```text\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('## A worked example')));
  return block![1]!
    .split('\n')
    .filter((line) => /^(>>|<<) /.test(line))
    .map((line) => ({
      from: line.startsWith('>>') ? 'gateway' : 'server',
      message: JSON.parse(line.slice(3)) as Json,
    }));
}

/** The error table: on which stream, what the server sends, the `error` it gets back. */
function errorRows(doc: string): { stream: string; sent: string; error: string }[] {
  const section = doc.slice(doc.indexOf('## Errors'));
  return [
    ...section.matchAll(/^\|\s*(one-way|bidirectional)\s*\|\s*`(.+?)`\s*\|\s*`(.+?)`\s*\|$/gm),
  ].map((m) => ({ stream: m[1]!, sent: m[2]!, error: m[3]! }));
}

/** `path: type` for every leaf of a message, sorted: what a strict client checks. */
function shape(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) {
    return [...new Set(value.flatMap((v) => shape(v, `${path}[]`)))].sort();
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value)
      .flatMap(([key, v]) => shape(v, path === '' ? key : `${path}.${key}`))
      .sort();
  }
  return [`${path}: ${typeof value}`];
}

const START = jsonBlocks(DOC).find((m) => m.event === 'start')!.start as Json;
const EXTRA_HEADERS = jsonBlocks(DOC).find((m) => m.event === 'start')!.extra_headers as string;
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };

let pool: MediaWorkerPool;
let server: StreamServer;
let phone: RtpPeer;
/** The real events of a bidirectional stream with the document's ids, and of a one-way one. */
let twoWay: StreamConnection;
let oneWay: StreamConnection;
const sessionPort = { value: 0 };

function fork(extra: Partial<StreamForkSpec>): StreamForkSpec {
  return {
    streamId: START.streamId as string,
    callId: START.callId as string,
    accountId: START.accountId as string,
    serviceUrl: server.url,
    headers: {},
    extraHeaders: EXTRA_HEADERS,
    tracks: START.tracks as ('inbound' | 'outbound')[],
    encoding: 'l16',
    rate: 8000,
    bidirectional: true,
    timeoutMs: 60_000,
    noiseCancellationLevel: null,
    ...extra,
  };
}

beforeAll(async () => {
  const base = 20000 + 2 * Math.floor(Math.random() * 10000);
  pool = new MediaWorkerPool(
    { onEvent: () => {} },
    {
      size: 1,
      settings: { rtpPorts: { min: base, max: base + 99 }, rtpHost: '127.0.0.1', cname: 'doc' },
    },
  );
  server = await StreamServer.start();
  phone = await RtpPeer.open(0x4d0c);
  const session = await pool.createSession('call', {
    formats: [PCMU],
    telephoneEvent: { payloadType: 101, rate: 8000 },
    remote: phone.address,
  });
  sessionPort.value = session.port;
  await pool.send({ type: 'startStream', sessionId: 'call', stream: fork({}) });
  twoWay = await server.connection(0);
  const oneWayId = '0b9e3c1e-7a2d-4f5b-9c8e-2d1f0a6b7c3d';
  await pool.send({
    type: 'startStream',
    sessionId: 'call',
    stream: fork({ streamId: oneWayId, bidirectional: false }),
  });
  oneWay = await server.connection(1);
  await until(() => twoWay.of('start').length === 1 && oneWay.of('start').length === 1);
  await drive();
}, 60_000);

afterAll(async () => {
  await pool?.close();
  await server?.close();
  await phone?.close();
});

/** Everything the document shows happening, done for real on the two streams. */
async function drive(): Promise<void> {
  // The caller says something and presses 5 (RFC 4733, its end sent three times).
  await phone.stream(
    sessionPort.value,
    [...chunks(tone(8000, 440, 0.1, 8000), [160])].map(muLawEncode),
    { payloadType: 0 },
  );
  const at = phone.nextTimestamp;
  for (let i = 0; i < 4; i++) {
    const end = i === 3;
    const payload = encodeTelephoneEvent({ event: 5, end, volume: 10, duration: (i + 1) * 160 });
    for (let copy = 0; copy < (end ? 3 : 1); copy++) {
      phone.send(sessionPort.value, payload, { payloadType: 101, marker: i === 0, timestamp: at });
    }
    await sleep(20);
  }
  await until(() => twoWay.of('dtmf').length === 1);
  // The server speaks 100 ms, marks it, and is interrupted by a second clip it clears.
  const speech = (seconds: number) => Buffer.alloc(16000 * seconds, 0x10).toString('base64');
  twoWay.send({
    event: 'playAudio',
    media: { contentType: 'audio/x-l16', sampleRate: 8000, payload: speech(0.1) },
  });
  twoWay.send({ event: 'checkpoint', streamId: START.streamId, name: 'greeting' });
  await until(() => twoWay.of('playedStream').length === 1);
  twoWay.send({
    event: 'playAudio',
    media: { contentType: 'audio/x-l16', sampleRate: 8000, payload: speech(2) },
  });
  twoWay.send({ event: 'clearAudio', streamId: START.streamId });
  await until(() => twoWay.of('clearedAudio').length === 1);
  twoWay.send({ event: 'sendDTMF', dtmf: '1' });
  // The error table's inputs, each on its stream.
  for (const row of errorRows(DOC)) {
    const ws = row.stream === 'one-way' ? oneWay : twoWay;
    const before = ws.of('error').length;
    ws.socket.send(row.sent);
    await until(() => ws.of('error').length === before + 1);
  }
  await pool.send({ type: 'stopStream', sessionId: 'call', streamId: START.streamId as string });
  await until(() => twoWay.of('stop').length === 1 && twoWay.closed !== null);
}

describe('docs/stream-protocol.md', () => {
  it('shows every event a stream sends, each with exactly the fields the gateway sends', () => {
    const real = new Map<string, StreamEvent>();
    for (const event of twoWay.events) if (!real.has(event.event)) real.set(event.event, event);
    const documented = [
      ...jsonBlocks(DOC).filter((m) => 'sequenceNumber' in m),
      ...transcript(DOC)
        .filter((line) => line.from === 'gateway')
        .map((line) => line.message),
    ];
    expect(new Set(documented.map((m) => m.event))).toEqual(new Set(real.keys()));
    for (const example of documented) {
      expect(shape(example), String(example.event)).toEqual(shape(real.get(String(example.event))));
    }
    expect(twoWay.violations).toEqual([]);
  });

  it("shows the start event this stream's ids and format give, and a stop that ends it", () => {
    const start = jsonBlocks(DOC).find((m) => m.event === 'start')!;
    expect(twoWay.of('start')[0]).toEqual(start);
    const stop = jsonBlocks(DOC).find((m) => m.event === 'stop')!;
    expect({ ...twoWay.of('stop')[0], sequenceNumber: 0 }).toEqual({ ...stop, sequenceNumber: 0 });
    expect(twoWay.closed).toEqual({ code: 1000, reason: 'stopped' });
  });

  it('shows server messages the gateway reads and acts on', () => {
    const documented = [
      ...jsonBlocks(DOC).filter((m) => !('sequenceNumber' in m)),
      ...transcript(DOC)
        .filter((line) => line.from === 'server')
        .map((line) => line.message),
    ];
    expect(new Set(documented.map((m) => m.event))).toEqual(
      new Set(['playAudio', 'checkpoint', 'clearAudio', 'sendDTMF']),
    );
    for (const message of documented) {
      const read = readClientMessage(
        Buffer.from(JSON.stringify(message)),
        false,
        START.streamId as string,
      );
      expect(read, JSON.stringify(message)).toHaveProperty('message');
    }
  });

  it("gives each error in the table the gateway's own words", () => {
    const rows = errorRows(DOC);
    expect(rows.length).toBeGreaterThanOrEqual(8);
    const said = {
      bidirectional: twoWay.of('error').map((e) => e.error),
      'one-way': oneWay.of('error').map((e) => e.error),
    };
    const expected = {
      bidirectional: rows.filter((r) => r.stream === 'bidirectional').map((r) => r.error),
      'one-way': rows.filter((r) => r.stream === 'one-way').map((r) => r.error),
    };
    expect(said).toEqual(expected);
  });

  it('has a transcript whose gateway events count up from 1', () => {
    const numbers = transcript(DOC)
      .filter((line) => line.from === 'gateway')
      .map((line) => line.message.sequenceNumber as number);
    expect(numbers[0]).toBe(1);
    for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBeGreaterThan(numbers[i - 1]!);
  });

  it('names the signature headers the upgrade request carries, and only those', () => {
    const named = new Set(DOC.match(/X-(?:Service|Plivo)-Signature-[A-Za-z0-9-]*[A-Za-z0-9]/g));
    const sent = signatureHeaders(
      { method: 'GET', url: 'wss://ai.example.com/stream', params: {} },
      { accountToken: 'a'.repeat(40), mainToken: 'b'.repeat(40) },
    );
    expect(named).toEqual(new Set(Object.keys(sent)));
  });
});
