import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { RateDeck } from '../../../src/call/billing/rate-deck.js';
import { buildCallRecord } from '../../../src/call/call-record.js';
import { DEFAULT_RATE_DECK } from '../../../src/config/config.js';
import { formatTime } from '../../../src/core/record-time.js';
import type { StreamRecord } from '../../../src/state/records.js';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';
import { startGateway, UUID, type Credentials, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { describeEachStore } from '../../support/stores.js';
import { until } from '../../support/wait.js';

const NOW = Date.UTC(2024, 5, 30, 12, 0, 0);
const CONTENT_TYPES =
  'audio/x-l16;rate=8000, audio/x-l16;rate=16000, audio/x-l16;rate=24000, audio/x-mulaw;rate=8000';

describeEachStore('stream records', (target) => {
  let gw: TestGateway;
  let seq: number;
  const call = randomUUID();

  beforeEach(async () => {
    await target.flush();
    seq = 0;
    gw = await startGateway({ redisUrl: target.redisUrl() });
  });
  afterEach(async () => {
    await gw.close();
  });

  const streamsOf = (callUuid: string, as: Credentials = gw.main) =>
    `/v1/Account/${as.id}/Call/${callUuid}/Stream`;

  /** Stores a stream record the way the stream engine keeps one: a finished stream by default. */
  const stream = async (over: Partial<StreamRecord> = {}): Promise<StreamRecord> => {
    seq += 1;
    const record: StreamRecord = {
      stream_id: `00000000-0000-4000-9000-${String(seq).padStart(12, '0')}`,
      call_uuid: call,
      service_url: `wss://ai.example.com/audio/${seq}`,
      bidirectional: false,
      audio_track: 'inbound',
      content_type: 'audio/x-l16;rate=8000',
      start_time: '2024-06-30 11:59:00+00:00',
      end_time: '2024-06-30 12:00:05+00:00',
      bill_duration: 65,
      rounded_bill_duration: 120,
      billed_amount: '0.00600',
      status: 'stopped',
      account: gw.main.id,
      subaccount: null,
      created: NOW + seq * 1000,
      ...over,
    };
    await gw.gateway.state.streams.create(record);
    return record;
  };

  it('retrieves a stream with every field, with and without the trailing slash', async () => {
    const s = await stream({ bidirectional: true, content_type: 'audio/x-mulaw;rate=8000' });
    const path = `${streamsOf(call)}/${s.stream_id}`;
    const res = await gw.request('GET', `${path}/`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      api_id: expect.any(String),
      stream_id: s.stream_id,
      call_uuid: call,
      service_url: 'wss://ai.example.com/audio/1',
      bidirectional: true,
      audio_track: 'inbound',
      content_type: 'audio/x-mulaw;rate=8000',
      start_time: '2024-06-30 11:59:00+00:00',
      end_time: '2024-06-30 12:00:05+00:00',
      bill_duration: 65,
      billed_amount: '0.00600',
      rounded_bill_duration: 120,
      created_at: '2024-06-30 12:00:01+00:00',
      auth_id: gw.main.id,
      resource_uri: `${path}/`,
    });
    expect(res.body.created_at).toBe(formatTime(s.created));
    const bare = await gw.request('GET', path);
    expect(bare.status).toBe(200);
    expect(bare.body.stream_id).toBe(s.stream_id);
  });

  it('shows a running stream with no end and no billing yet', async () => {
    const s = await stream({
      end_time: null,
      bill_duration: null,
      rounded_bill_duration: null,
      billed_amount: null,
      status: 'connected',
    });
    const res = await gw.request('GET', `${streamsOf(call)}/${s.stream_id}/`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      end_time: null,
      bill_duration: null,
      rounded_bill_duration: null,
      billed_amount: null,
    });
  });

  it('answers 404 for an unknown stream and for a stream of another call', async () => {
    const s = await stream();
    const unknown = randomUUID();
    const res = await gw.request('GET', `${streamsOf(call)}/${unknown}/`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ api_id: expect.any(String), error: `stream ${unknown} not found` });
    const elsewhere = await gw.request('GET', `${streamsOf(randomUUID())}/${s.stream_id}/`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error).toBe(`stream ${s.stream_id} not found`);
  });

  it("keeps subaccounts apart; the main account sees its subaccounts' streams", async () => {
    const a = await gw.subaccount('a');
    const b = await gw.subaccount('b');
    const callOfA = randomUUID();
    const ofA = await stream({ call_uuid: callOfA, subaccount: a.id });
    const ofMain = await stream();

    const byMain = await gw.request('GET', `${streamsOf(callOfA)}/${ofA.stream_id}/`);
    expect(byMain.status).toBe(200);
    expect(byMain.body.auth_id).toBe(a.id);
    expect(byMain.body.resource_uri).toBe(`${streamsOf(callOfA)}/${ofA.stream_id}/`);
    const byA = await gw.request('GET', `${streamsOf(callOfA, a)}/${ofA.stream_id}/`, { as: a });
    expect(byA.status).toBe(200);
    expect(byA.body.auth_id).toBe(a.id);
    expect(byA.body.resource_uri).toBe(`${streamsOf(callOfA, a)}/${ofA.stream_id}/`);

    const byB = await gw.request('GET', `${streamsOf(callOfA, b)}/${ofA.stream_id}/`, { as: b });
    expect(byB.status).toBe(404);
    const mainsByA = await gw.request('GET', `${streamsOf(call, a)}/${ofMain.stream_id}/`, {
      as: a,
    });
    expect(mainsByA.status).toBe(404);

    const list = (callUuid: string, as: Credentials) =>
      gw.request('GET', `${streamsOf(callUuid, as)}/`, { as });
    const listIds = async (callUuid: string, as: Credentials) =>
      (await list(callUuid, as)).body.objects.map((o: { stream_id: string }) => o.stream_id);
    expect(await listIds(callOfA, gw.main)).toEqual([ofA.stream_id]);
    expect(await listIds(callOfA, a)).toEqual([ofA.stream_id]);
    expect(await listIds(call, gw.main)).toEqual([ofMain.stream_id]);
    // A call whose streams an account does not see is not its call.
    expect((await list(callOfA, b)).status).toBe(404);
    expect((await list(call, a)).status).toBe(404);
  });

  it("lists a call's streams in the list envelope, newest first, paged by limit and offset", async () => {
    const first = await stream({ audio_track: 'both' });
    const second = await stream({ bidirectional: true });
    const third = await stream({ end_time: null, status: 'connected' });
    await stream({ call_uuid: randomUUID() });

    const res = await gw.request('GET', `${streamsOf(call)}/`);
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({
      limit: 20,
      offset: 0,
      total_count: 3,
      next: null,
      previous: null,
    });
    expect(res.body.objects.map((o: { stream_id: string }) => o.stream_id)).toEqual([
      third.stream_id,
      second.stream_id,
      first.stream_id,
    ]);
    expect(res.body.objects[2]).toEqual({
      stream_id: first.stream_id,
      call_uuid: call,
      service_url: first.service_url,
      audio_track: 'both',
      bidirectional: false,
      start_time: first.start_time,
      end_time: first.end_time,
    });
    expect(res.body.objects[0].end_time).toBeNull();

    const page = await gw.request('GET', `${streamsOf(call)}?limit=2`);
    expect(page.body.meta).toEqual({
      limit: 2,
      offset: 0,
      total_count: 3,
      next: `${streamsOf(call)}?limit=2&offset=2`,
      previous: null,
    });
    expect(page.body.objects).toHaveLength(2);
    const last = await gw.request('GET', `${streamsOf(call)}/?limit=2&offset=2`);
    expect(last.body.meta).toMatchObject({
      next: null,
      previous: `${streamsOf(call)}/?limit=2&offset=0`,
    });
    expect(last.body.objects.map((o: { stream_id: string }) => o.stream_id)).toEqual([
      first.stream_id,
    ]);
  });

  it('answers 404 for the streams of a call the account has neither live nor recorded', async () => {
    const unknown = randomUUID();
    const res = await gw.request('GET', `${streamsOf(unknown)}/`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ api_id: expect.any(String), error: `call ${unknown} not found` });
    // Another account's call, with its streams, is as unknown to a subaccount.
    await stream();
    const sub = await gw.subaccount();
    const hidden = await gw.request('GET', `${streamsOf(call, sub)}/`, { as: sub });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ api_id: expect.any(String), error: `call ${call} not found` });
  });

  it('lists no streams (200) for an ended call of the account that had none', async () => {
    const ended = randomUUID();
    await gw.gateway.state.calls.create(
      buildCallRecord(
        {
          callUuid: ended,
          requestUuid: null,
          direction: 'outbound',
          from: '14155550100',
          to: '14155550111',
          initiatedAt: NOW - 70_000,
          answeredAt: NOW - 65_000,
          endedAt: NOW,
          hangupCauseCode: 4000,
          hangupCauseName: 'Normal Hangup',
          hangupSource: 'Callee',
          sourceIp: '203.0.113.7',
          account: gw.main.id,
          subaccount: null,
        },
        RateDeck.load(DEFAULT_RATE_DECK),
      ),
    );
    const res = await gw.request('GET', `${streamsOf(ended)}/`);
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({
      limit: 20,
      offset: 0,
      total_count: 0,
      next: null,
      previous: null,
    });
    expect(res.body.objects).toEqual([]);
    // The main account's record is not a subaccount's call.
    const sub = await gw.subaccount();
    expect((await gw.request('GET', `${streamsOf(ended, sub)}/`, { as: sub })).status).toBe(404);
  });

  it.each([
    ['limit=0', 'invalid limit: must be an integer from 1 to 20'],
    ['limit=21', 'invalid limit: must be an integer from 1 to 20'],
    ['limit=x', 'invalid limit: must be an integer from 1 to 20'],
    ['offset=-1', 'invalid offset: must be an integer of at least 0'],
  ])('refuses a list with %s', async (query, error) => {
    const res = await gw.request('GET', `${streamsOf(call)}/?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ api_id: expect.any(String), error });
  });

  it('answers 404 to DELETE of a stored stream, of all streams, when the call is not live', async () => {
    const s = await stream({ end_time: null, status: 'connected' });
    const one = await gw.request('DELETE', `${streamsOf(call)}/${s.stream_id}/`);
    expect(one.status).toBe(404);
    expect(one.body).toEqual({
      api_id: expect.any(String),
      error: `stream ${s.stream_id} not found`,
    });
    const all = await gw.request('DELETE', `${streamsOf(call)}/`);
    expect(all.status).toBe(404);
    expect(all.body).toEqual({ api_id: expect.any(String), error: `call ${call} not found` });
    expect((await gw.request('DELETE', `${streamsOf(randomUUID())}/${randomUUID()}`)).status).toBe(
      404,
    );
    expect((await gw.request('DELETE', streamsOf(randomUUID()))).status).toBe(404);
  });
});

describe('start stream parameters', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw.close();
  });

  const unknownCall = () => `/v1/Account/${gw.main.id}/Call/${randomUUID()}/Stream/`;
  const url = 'wss://ai.example.com/audio';
  const bidirectionalRule = (track: string) =>
    `audio_track must be inbound when bidirectional is true but received ${track}`;
  const badUrl = 'invalid service_url: must be a ws:// or wss:// URL';
  const timeout = 'invalid stream_timeout: must be a whole number of seconds from 1 to 86400';
  const headers = 'extra_headers must be at most 512 bytes';
  const level = 'invalid noise_cancellation_level: must be an integer from 60 to 100';

  it.each([
    [{}, 'missing required parameter: service_url'],
    [{ bidirectional: true }, 'missing required parameter: service_url'],
  ])('POST %j → 422', async (json, error) => {
    const res = await gw.request('POST', unknownCall(), { json });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ api_id: expect.any(String), error });
  });

  /** Each case is added to a valid service_url; the test is named after the bad parameter. */
  const invalid: [Record<string, unknown>, string][] = [
    [{ service_url: 'https://ai.example.com/' }, badUrl],
    [{ service_url: 'ws://' }, badUrl],
    [{ service_url: 'ai.example.com' }, badUrl],
    [{ bidirectional: true, audio_track: 'outbound' }, bidirectionalRule('outbound')],
    [{ bidirectional: true, audio_track: 'both' }, bidirectionalRule('both')],
    [{ bidirectional: 'yes' }, 'invalid bidirectional: must be true or false'],
    [
      { audio_track: 'mixed' },
      'invalid audio_track: must be inbound, outbound or both (inbound only when bidirectional is true)',
    ],
    [{ stream_timeout: 0 }, timeout],
    [{ stream_timeout: 1.5 }, timeout],
    [{ stream_timeout: 3_000_000 }, timeout],
    [
      { content_type: 'audio/x-l16;rate=44100' },
      `invalid content_type: must be one of ${CONTENT_TYPES}`,
    ],
    [
      { status_callback_url: 'ftp://example.com/' },
      'invalid status_callback_url: must be an http or https URL',
    ],
    [{ status_callback_method: 'PUT' }, 'invalid status_callback_method: must be GET or POST'],
    [{ extra_headers: `a=${'x'.repeat(511)}` }, headers],
    // 301 characters but 600 bytes: the bound is in bytes.
    [{ extra_headers: `a=${'é'.repeat(299)}` }, headers],
    // The same pairs the XML's extraHeaders takes.
    ...['no pairs here', 'a=hello world', 'a=1,,b=2', 'a b=1'].map(
      (extra_headers): [Record<string, unknown>, string] => [
        { extra_headers },
        `extra_headers must be name=value pairs separated by commas, with no spaces in a value, but received ${extra_headers}`,
      ],
    ),
    [{ extra_headers: 'a=1,a=2' }, 'extra_headers must name each header once but names a twice'],
    [{ noise_cancellation: 'maybe' }, 'invalid noise_cancellation: must be true or false'],
    [{ noise_cancellation_level: 59 }, level],
    [{ noise_cancellation_level: 101 }, level],
    [{ noise_cancellation_level: 'high' }, level],
  ];
  it.each(
    invalid.map(
      ([parameters, error]) => [Object.keys(parameters).at(-1)!, parameters, error] as const,
    ),
  )('POST with a bad %s → 400', async (_name, parameters, error) => {
    const json = { service_url: url, ...parameters };
    const res = await gw.request('POST', unknownCall(), { json });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ api_id: expect.any(String), error });
  });

  it('reads form bodies: "true" and "false" strings, numbers as text, the same rules', async () => {
    const bad = await gw.request('POST', unknownCall(), {
      form: { service_url: url, bidirectional: 'true', audio_track: 'both' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(bidirectionalRule('both'));
    const zero = await gw.request('POST', unknownCall(), {
      form: { service_url: url, stream_timeout: '0' },
    });
    expect(zero.body.error).toBe(timeout);
  });

  it('takes every valid request to the call lookup: 404 for a call that is not live', async () => {
    const valid: { json?: Record<string, unknown>; form?: Record<string, string> }[] = [
      { json: { service_url: 'ws://127.0.0.1:9000/' } },
      { json: { service_url: 'WSS://AI.example.com/audio?token=abc' } },
      {
        json: {
          service_url: url,
          bidirectional: true,
          audio_track: 'inbound',
          stream_timeout: 1,
          content_type: 'audio/x-l16;rate=24000',
          status_callback_url: 'https://app.example.com/stream-status',
          status_callback_method: 'GET',
          extra_headers: `a=${'x'.repeat(510)}`,
          noise_cancellation: true,
          noise_cancellation_level: 60,
        },
      },
      { json: { service_url: url, audio_track: 'both', noise_cancellation: 'false' } },
      { json: { service_url: url, audio_track: 'outbound', noise_cancellation_level: 100 } },
      {
        form: {
          service_url: url,
          bidirectional: 'false',
          audio_track: 'both',
          content_type: 'audio/x-mulaw;rate=8000',
          noise_cancellation: 'true',
          noise_cancellation_level: '85',
          stream_timeout: '86400',
        },
      },
      { form: { service_url: url, content_type: 'audio/x-l16;rate=16000' } },
    ];
    for (const body of valid) {
      const path = unknownCall();
      const res = await gw.request('POST', path, body);
      expect(res.status, JSON.stringify(body)).toBe(404);
      expect(res.body.error).toMatch(/^call [0-9a-f-]{36} not found$/);
    }
  });

  it('answers 405 with Allow for a wrong method', async () => {
    const res = await gw.request('PUT', unknownCall());
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('DELETE, GET, POST');
  });

  it('documents the routes and every parameter with its rule', () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const spec = gw.gateway.app.swagger() as any;
    const list = spec.paths['/v1/Account/{auth_id}/Call/{call_uuid}/Stream/'];
    const one = spec.paths['/v1/Account/{auth_id}/Call/{call_uuid}/Stream/{stream_id}/'];
    expect(Object.keys(list).sort()).toEqual(['delete', 'get', 'post']);
    expect(Object.keys(one).sort()).toEqual(['delete', 'get']);
    const body = list.post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['service_url']);
    expect(Object.keys(body.properties).sort()).toEqual([
      'audio_track',
      'bidirectional',
      'content_type',
      'extra_headers',
      'noise_cancellation',
      'noise_cancellation_level',
      'service_url',
      'status_callback_method',
      'status_callback_url',
      'stream_timeout',
    ]);
    expect(body.properties.noise_cancellation_level).toMatchObject({
      minimum: 60,
      maximum: 100,
      default: 85,
    });
    expect(Object.keys(list.post.responses)).toContain('201');
    expect(one.get.responses['200'].content['application/json'].schema).toBeDefined();
  });
});

/**
 * Streams of a real call: the gateway dials SIPp (the carrier), the answer XML holds the call
 * up, and a WebSocket server of the test plays the customer's voice-AI server.
 */
describe('streams on a live call', () => {
  let gw: TestGateway;
  let app: ClientApp;
  let wss: WebSocketServer;
  const sockets: { socket: WebSocket; messages: Record<string, unknown>[] }[] = [];
  const carriers: SippUas[] = [];
  const peers: RtpPeer[] = [];

  beforeAll(async () => {
    app = await ClientApp.start();
    gw = await startGateway({ listen: true });
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => wss.once('listening', resolve));
    wss.on('connection', (socket) => {
      const entry = { socket, messages: [] as Record<string, unknown>[] };
      sockets.push(entry);
      socket.on('message', (data) => entry.messages.push(JSON.parse(String(data))));
    });
  });
  afterEach(async () => {
    await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/`);
    await Promise.all(carriers.splice(0).map((c) => c.stop()));
    await Promise.all(peers.splice(0).map((p) => p.close()));
    sockets.splice(0);
    app.reset();
  });
  afterAll(async () => {
    await gw?.close();
    await app?.close();
    await new Promise((resolve) => wss?.close(resolve));
  });

  const wsUrl = () => `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/audio`;

  /** Places a call the carrier answers and the answer XML holds up; resolves once answered. */
  async function liveCall(): Promise<string> {
    const setup = { gw, app, carriers, peers };
    const placed = await placeCarrierCall(setup, '<Response><Wait length="20"/></Response>');
    return answeredCallUuid(app, placed.requestUuid);
  }

  it('starts a stream (201), stores it, connects, and stops it with DELETE (204, then 404)', async () => {
    const uuid = await liveCall();
    const base = `/v1/Account/${gw.main.id}/Call/${uuid}/Stream`;
    const started = await gw.request('POST', `${base}/`, {
      json: {
        service_url: wsUrl(),
        content_type: 'audio/x-mulaw;rate=8000',
        extra_headers: 'a=1',
      },
    });
    expect(started.status).toBe(201);
    expect(started.body).toEqual({
      api_id: expect.any(String),
      message: 'audio streaming started',
      stream_id: expect.stringMatching(UUID),
    });
    const streamId = started.body.stream_id as string;

    const one = await gw.request('GET', `${base}/${streamId}/`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      stream_id: streamId,
      call_uuid: uuid,
      service_url: wsUrl(),
      bidirectional: false,
      audio_track: 'inbound',
      content_type: 'audio/x-mulaw;rate=8000',
      end_time: null,
      auth_id: gw.main.id,
    });
    const list = await gw.request('GET', `${base}/`);
    expect(list.body.objects.map((o: { stream_id: string }) => o.stream_id)).toEqual([streamId]);

    await until(() => sockets.some((s) => s.messages.length > 0), 10_000);
    expect(sockets[0]!.messages[0]).toMatchObject({
      event: 'start',
      sequenceNumber: 1,
      start: { callId: uuid, streamId, accountId: gw.main.id, tracks: ['inbound'] },
      extra_headers: 'a=1',
    });

    const stopped = await gw.request('DELETE', `${base}/${streamId}/`);
    expect(stopped.status).toBe(204);
    expect(stopped.text).toBe('');
    expect((await gw.request('DELETE', `${base}/${streamId}/`)).status).toBe(404);
    expect((await gw.request('DELETE', `${base}/${randomUUID()}/`)).status).toBe(404);
  });

  it('reports to status_callback_url with its method, signed: StartStream, then StopStream', async () => {
    const uuid = await liveCall();
    const base = `/v1/Account/${gw.main.id}/Call/${uuid}/Stream`;
    const started = await gw.request('POST', `${base}/`, {
      json: {
        service_url: wsUrl(),
        status_callback_url: `${app.baseUrl}/stream-status?tenant=7`,
        status_callback_method: 'GET',
        extra_headers: 'a=1,b=2',
      },
    });
    expect(started.status).toBe(201);
    const streamId = started.body.stream_id as string;
    await until(() => app.requestsTo('/stream-status').length === 1, 10_000);
    expect((await gw.request('DELETE', `${base}/${streamId}/`)).status).toBe(204);
    await until(() => app.requestsTo('/stream-status').length === 2, 10_000);

    const [connected, stopped] = app.requestsTo('/stream-status');
    for (const callback of [connected!, stopped!]) {
      expect(callback.method).toBe('GET');
      expectValidSignatures(callback, { accountToken: gw.main.token, mainToken: gw.main.token });
      expect(callback.params).toMatchObject({
        tenant: '7',
        StreamID: streamId,
        CallUUID: uuid,
        ServiceURL: wsUrl(),
        ExtraHeaders: 'a=1,b=2',
        Timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/),
      });
    }
    expect(connected!.params).toMatchObject({ Event: 'StartStream', Status: 'connected' });
    expect(stopped!.params).toMatchObject({ Event: 'StopStream', Status: 'stopped' });
  });

  it('bills a stream that ends with its call from the connection, not from the request', async () => {
    // A server slow to accept: the upgrade is answered 3 s after it came.
    const slow = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      verifyClient: (_info, accept) => setTimeout(() => accept(true), 3000),
    });
    await new Promise((resolve) => slow.once('listening', resolve));
    let connectedAt = 0;
    slow.on('connection', () => (connectedAt = Date.now()));
    try {
      const uuid = await liveCall();
      const base = `/v1/Account/${gw.main.id}/Call/${uuid}/Stream`;
      const url = `ws://127.0.0.1:${(slow.address() as AddressInfo).port}/audio`;
      const started = await gw.request('POST', `${base}/`, { json: { service_url: url } });
      expect(started.status).toBe(201);
      await until(() => connectedAt > 0, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const hungUp = await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
      expect(hungUp.status).toBe(204);
      const record = async () =>
        (await gw.request('GET', `${base}/${started.body.stream_id}/`)).body;
      await until(async () => (await record()).end_time !== null, 10_000);
      // About a second streamed; the three seconds of waiting for the server are free.
      const billed = await record();
      expect(billed.rounded_bill_duration).toBe(60);
      expect(billed.bill_duration).toBeGreaterThanOrEqual(1);
      // Billed from the request it would be over 4 s; a loaded machine may add a second or so.
      expect(billed.bill_duration).toBeLessThanOrEqual(3);
    } finally {
      await new Promise((resolve) => slow.close(resolve));
    }
  }, 30_000);

  it('lists and stops every stream of a live call (200, then 204); other accounts get 404', async () => {
    const uuid = await liveCall();
    const base = `/v1/Account/${gw.main.id}/Call/${uuid}/Stream`;
    // A live call without a stream yet lists none.
    const empty = await gw.request('GET', `${base}/`);
    expect(empty.status).toBe(200);
    expect(empty.body.meta.total_count).toBe(0);
    expect(empty.body.objects).toEqual([]);
    for (const audio_track of ['inbound', 'outbound']) {
      const res = await gw.request('POST', `${base}/`, {
        json: { service_url: wsUrl(), audio_track },
      });
      expect(res.status).toBe(201);
    }
    const sub = await gw.subaccount('other');
    const asSub = `/v1/Account/${sub.id}/Call/${uuid}/Stream/`;
    expect(
      (await gw.request('POST', asSub, { as: sub, json: { service_url: wsUrl() } })).status,
    ).toBe(404);
    expect((await gw.request('DELETE', asSub, { as: sub })).status).toBe(404);
    const hidden = await gw.request('GET', asSub, { as: sub });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error).toBe(`call ${uuid} not found`);
    // The account's own list holds both.
    expect((await gw.request('GET', base)).body.meta.total_count).toBe(2);

    expect((await gw.request('DELETE', `${base}/`)).status).toBe(204);
    // Nothing is left running, and the call is still live: still 204.
    expect((await gw.request('DELETE', base)).status).toBe(204);
    expect((await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`)).status).toBe(
      204,
    );
    await until(async () => (await gw.request('DELETE', `${base}/`)).status === 404, 10_000);
  });
});
