import { createHmac } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answeredCallUuid, hangUpAllCalls, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { TEST_HEARTBEAT_ENV } from '../../support/cluster-heartbeat.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { StreamServer } from '../../support/stream-server.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * Several gateway nodes on one Redis: each sees the others (heartbeats), a REST request on
 * any node reaches a call that another runs, outbound calls go to the least loaded node, a
 * draining node takes no new work, and a node that dies has its calls closed by a survivor.
 * Every node has the cluster tests' faster heartbeat.
 */
let redis: RedisServer;
let a: TestGateway;
let b: TestGateway;
let app: ClientApp;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  redis = await startRedis();
  app = await ClientApp.start();
  a = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: { VOXGATE_NODE_ID: 'node-a', ...TEST_HEARTBEAT_ENV },
  });
  // The second node finds the main account the first stored.
  b = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: { VOXGATE_NODE_ID: 'node-b', ...TEST_HEARTBEAT_ENV },
  });
  expect(b.main).toEqual(a.main);
});

afterEach(async () => {
  // The calls end before their carriers stop: a BYE to a stopped carrier waits out its timer.
  await hangUpAllCalls([a, b]);
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await a.close();
  await b.close();
  await app.close();
  await redis.stop();
});

const v1 = (gw: TestGateway) => `/v1/Account/${gw.main.id}`;
const health = async (gw: TestGateway) =>
  (await gw.gateway.app.inject({ method: 'GET', url: '/health' })).json() as {
    status: string;
    node: { id: string; state: string };
    peers: {
      id: string;
      state: string;
      calls: number;
      binds: { carrier: string; bind: number; state: string }[];
      http: string;
    }[];
  };

/** An answered call placed through `gw`'s API to a SIPp carrier, and its uuid. */
async function answeredCall(gw: TestGateway) {
  const placed = await placeCarrierCall(
    { gw, app, carriers, peers },
    '<Response><Wait length="30"/></Response>',
    { hangup_url: `${app.baseUrl}/hangup` },
  );
  return { ...placed, uuid: await answeredCallUuid(app, placed.requestUuid) };
}

describe('gateway nodes on one Redis', () => {
  it('see each other in /health, with their state and load', async () => {
    await until(async () => (await health(a)).peers.length === 2, 5000);
    const seen = await health(b);
    expect(seen.node).toEqual({ id: 'node-b', state: 'active' });
    expect(seen.peers.map((p) => p.id).sort()).toEqual(['node-a', 'node-b']);
    const metrics = (await b.gateway.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^voxgate_cluster_nodes\{state="active"\} 2$/m);
    // Each names where its REST API answers (the port it bound, not the 0 it was given).
    await until(async () => (await health(b)).peers.every((p) => !p.http.endsWith(':0')), 5000);
    for (const peer of (await health(b)).peers) {
      const res = await fetch(`http://${peer.http}/health`);
      expect(((await res.json()) as { node: { id: string } }).node.id).toBe(peer.id);
    }
  });

  it('records which node holds which SMPP bind', async () => {
    const smsc = await SmscSimulator.start();
    const s = await startGateway({
      redisUrl: redis.url,
      listen: true,
      env: {
        VOXGATE_NODE_ID: 'node-s',
        VOXGATE_SMPP_URL: smsc.url('enquire_link=1'),
        ...TEST_HEARTBEAT_ENV,
      },
    });
    try {
      await until(
        async () =>
          (await health(a)).peers.some(
            (p) => p.id === 'node-s' && p.binds.some((bind) => bind.state === 'bound'),
          ),
        5000,
      );
      const seen = (await health(a)).peers.find((p) => p.id === 'node-s')!;
      expect(seen.binds).toEqual([{ carrier: expect.any(String), bind: 1, state: 'bound' }]);
      expect((await health(a)).peers.find((p) => p.id === 'node-a')!.binds).toEqual([]);
    } finally {
      await s.close();
      await smsc.stop();
    }
  });

  it("lets a node list, show, speak into and hang up another node's call", async () => {
    const call = await answeredCall(a);
    // Both nodes idle: the node asked runs it.
    expect(a.gateway.calls.runs(call.uuid)).toBe(true);
    const listed = await b.request('GET', `${v1(b)}/Call/?status=live`);
    expect(listed.body.calls).toEqual([call.uuid]);
    const shown = await b.request('GET', `${v1(b)}/Call/${call.uuid}/?status=live`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ call_uuid: call.uuid, call_status: 'in-progress' });
    const spoken = await b.request('POST', `${v1(b)}/Call/${call.uuid}/Speak/`, {
      json: { text: 'Hello from the other node' },
    });
    expect(spoken.status).toBe(200);
    // The speech plays on node A's media: the carrier hears it.
    await until(() => call.media.received.length > 50, 5000);

    const ended = await b.request('DELETE', `${v1(b)}/Call/${call.uuid}/`);
    expect(ended.status).toBe(204);
    await until(() => app.requestsTo('/hangup').length > 0, 5000);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
      CallUUID: call.uuid,
      HangupSource: 'API Request',
    });
    expect((await b.request('DELETE', `${v1(b)}/Call/${call.uuid}/`)).status).toBe(404);
    expect((await b.request('GET', `${v1(b)}/Call/${call.uuid}/?status=live`)).status).toBe(404);
  });

  it("forks another node's call to a WebSocket server, and lists and stops the stream", async () => {
    const server = await StreamServer.start();
    try {
      const call = await answeredCall(a);
      const started = await b.request('POST', `${v1(b)}/Call/${call.uuid}/Stream/`, {
        json: { service_url: server.url, audio_track: 'inbound' },
      });
      expect(started.status).toBe(201);
      const connection = await server.connection();
      // Node A, which runs the call, connected it.
      await until(() => connection.of('start').length > 0, 5000);
      expect(connection.of('start')[0]).toMatchObject({ start: { callId: call.uuid } });
      const listed = await b.request('GET', `${v1(b)}/Call/${call.uuid}/Stream/`);
      expect(listed.body.objects.map((o: { stream_id: string }) => o.stream_id)).toEqual([
        started.body.stream_id,
      ]);
      const streamId = started.body.stream_id as string;
      const stopped = await b.request('DELETE', `${v1(b)}/Call/${call.uuid}/Stream/${streamId}/`);
      expect(stopped.status).toBe(204);
      await until(() => connection.closed !== null, 5000);
    } finally {
      await server.close();
    }
  });

  it('places a new request on the least loaded node', async () => {
    const first = await answeredCall(a);
    await until(
      async () => (await health(a)).peers.some((p) => p.id === 'node-a' && p.calls === 1),
      3000,
    );
    const second = await answeredCall(a);
    expect(a.gateway.calls.runs(first.uuid)).toBe(true);
    expect(b.gateway.calls.runs(second.uuid)).toBe(true);
    // DELETE Call/ on either node ends both.
    expect((await a.request('DELETE', `${v1(a)}/Call/`)).status).toBe(204);
    await until(() => app.requestsTo('/hangup').length === 2, 5000);
  });
});

describe('the control bus between nodes', () => {
  it('refuses and logs a forged message, and one from a node that is not alive', async () => {
    const publisher = new Redis(redis.url);
    try {
      const secret = createHmac('sha256', a.main.token).update('voxgate control bus').digest();
      const body = {
        kind: 'request',
        id: 'x1',
        from: 'node-b',
        to: 'node-a',
        method: 'hangupAll',
        args: [{ authId: a.main.id, tenant: a.main.id, isMain: true }],
        at: Date.now(),
      };
      const sign = (message: object, key: Buffer) =>
        createHmac('sha256', key).update(JSON.stringify(message)).digest('base64');
      const channel = 'voxgate:{cluster}:control:node-a';
      await publisher.publish(
        channel,
        JSON.stringify({ ...body, sig: sign(body, Buffer.from('guess')) }),
      );
      const stranger = { ...body, id: 'x2', from: 'node-z' };
      await publisher.publish(
        channel,
        JSON.stringify({ ...stranger, sig: sign(stranger, secret) }),
      );
      await until(
        () =>
          a.logs.some((l) => l.includes('control message refused: bad signature')) &&
          a.logs.some((l) => l.includes('control message refused: unknown node')),
        3000,
      );
    } finally {
      publisher.disconnect();
    }
  });

  it('answers 404 at once for a call that runs nowhere', async () => {
    const uuid = '0f5bd3a4-1111-4222-8333-944455556666';
    expect((await b.request('DELETE', `${v1(b)}/Call/${uuid}/`)).status).toBe(404);
    expect(
      (await b.request('POST', `${v1(b)}/Call/${uuid}/DTMF/`, { json: { digits: '1' } })).status,
    ).toBe(404);
  });
});

describe('a node that drains', () => {
  it('answers INVITE and OPTIONS 503 with Retry-After, places calls elsewhere, and ends when idle', async () => {
    const c = await startGateway({
      redisUrl: redis.url,
      listen: true,
      env: { VOXGATE_NODE_ID: 'node-c', ...TEST_HEARTBEAT_ENV },
    });
    try {
      await until(async () => (await health(c)).peers.length === 3, 5000);
      const drained = c.gateway.drain(10_000);
      await until(
        async () =>
          (await health(a)).peers.some((p) => p.id === 'node-c' && p.state === 'draining'),
        3000,
      );
      const seen = await c.gateway.app.inject({ method: 'GET', url: '/health' });
      expect(seen.statusCode).toBe(503);
      expect(seen.json()).toMatchObject({
        status: 'draining',
        node: { id: 'node-c', state: 'draining' },
      });

      const answer = await options(c.gateway.sip.addresses.udp.port);
      expect(answer).toMatch(/^SIP\/2\.0 503 Draining\r\n/);
      expect(answer).toMatch(/\r\nRetry-After: \d+\r\n/);

      const call = await answeredCall(c);
      expect(c.gateway.calls.runs(call.uuid)).toBe(false);
      expect(a.gateway.calls.runs(call.uuid) || b.gateway.calls.runs(call.uuid)).toBe(true);
      await drained; // it ran nothing
    } finally {
      await c.close();
    }
  });
});

describe('a node that dies', () => {
  let d: GatewayProcess | null = null;
  afterAll(async () => {
    if (d && d.child.exitCode === null) d.child.kill('SIGKILL');
  });

  it("has its calls closed by a survivor: records (its Dial's B leg's too), cause and hangup callback", async () => {
    d = await spawnGateway({
      VOXGATE_REDIS_URL: redis.url,
      VOXGATE_NODE_ID: 'node-d',
      VOXGATE_AUTH_ID: a.main.id,
      VOXGATE_AUTH_TOKEN: a.main.token,
      VOXGATE_SIP_HOST: '127.0.0.1',
      VOXGATE_RTP_HOST: '127.0.0.1',
      VOXGATE_RATE_LIMIT: '0',
      ...TEST_HEARTBEAT_ENV,
    });
    await d.healthy();
    const viaD = {
      ...a,
      request: async (method: 'POST' | 'GET', path: string, options: { json?: unknown } = {}) => {
        const res = await fetch(`http://127.0.0.1:${d!.port}${path}`, {
          method,
          headers: {
            authorization: `Basic ${Buffer.from(`${a.main.id}:${a.main.token}`).toString('base64')}`,
            'content-type': 'application/json',
          },
          body: options.json === undefined ? undefined : JSON.stringify(options.json),
        });
        const text = await res.text();
        return { status: res.status, headers: {}, body: text ? JSON.parse(text) : undefined, text };
      },
    } as TestGateway;
    // D's call, bridged by Dial to a B leg that answered.
    const bMedia = await RtpPeer.open();
    peers.push(bMedia);
    const bCarrier = await startSippUas({
      scenario: 'carrier-answer.xml',
      variables: { rtp_port: String(bMedia.port) },
    });
    carriers.push(bCarrier);
    const placed = await placeCarrierCall(
      { gw: viaD, app, carriers, peers },
      `<Response><Dial><User>sip:bob@127.0.0.1:${bCarrier.port}</User></Dial></Response>`,
      { hangup_url: `${app.baseUrl}/hangup` },
    );
    const call = { uuid: await answeredCallUuid(app, placed.requestUuid) };
    expect(a.gateway.calls.runs(call.uuid) || b.gateway.calls.runs(call.uuid)).toBe(false);
    // B answered: its RTP reaches B's media, and D's directory entry shows the B leg answered.
    await until(() => bMedia.received.length > 5, 8000);
    const redisClient = new Redis(redis.url);
    const bLegUuid = async () => {
      const entry = await redisClient.get(`voxgate:live-call:${call.uuid}`);
      return (JSON.parse(entry ?? '{}') as { childLegs?: { uuid: string; answered: number }[] })
        .childLegs?.[0];
    };
    await until(async () => typeof (await bLegUuid())?.answered === 'number', 3000);
    const bLeg = (await bLegUuid())!;
    redisClient.disconnect();
    d.child.kill('SIGKILL');
    const killedAt = Date.now();

    await until(() => app.requestsTo('/hangup').length > 0, 10_000);
    const closedAfter = Date.now() - killedAt;
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
      CallUUID: call.uuid,
      HangupCauseCode: '5000',
      HangupCauseName: 'Network Error',
      HangupSource: 'Error',
      CallStatus: 'completed',
    });
    const record = await a.request('GET', `${v1(a)}/Call/${call.uuid}/`);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({
      hangup_cause_code: 5000,
      hangup_source: 'Error',
      call_direction: 'outbound',
    });
    // The node time to live and at most one sweep after the last heartbeat (3 s and 1 s with
    // the default settings, less here), with room to spare.
    expect(closedAfter).toBeLessThan(6000);
    // Its B leg too, a child of the call, answered.
    await until(
      async () => (await a.request('GET', `${v1(a)}/Call/${bLeg.uuid}/`)).status === 200,
      3000,
    );
    const bRecord = (await a.request('GET', `${v1(a)}/Call/${bLeg.uuid}/`)).body;
    expect(bRecord).toMatchObject({
      parent_call_uuid: call.uuid,
      call_direction: 'outbound',
      to_number: `sip:bob@127.0.0.1:${bCarrier.port}`,
      hangup_cause_code: 5000,
      hangup_source: 'Error',
      call_state: 'ANSWER',
    });
    await until(async () => !(await health(a)).peers.some((p) => p.id === 'node-d'), 3000);
  });
});

/** Sends an OPTIONS to a node's UDP port and returns the first response's text. */
function options(port: number): Promise<string> {
  const socket = createSocket('udp4');
  return new Promise((resolve, reject) => {
    socket.on('message', (data) => {
      socket.close();
      resolve(data.toString('latin1'));
    });
    socket.bind(0, '127.0.0.1', () => {
      const local = socket.address().port;
      const request = [
        `OPTIONS sip:127.0.0.1:${port} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-drain-${local}`,
        'Max-Forwards: 70',
        `From: <sip:probe@127.0.0.1:${local}>;tag=probe`,
        `To: <sip:127.0.0.1:${port}>`,
        `Call-ID: drain-${local}@127.0.0.1`,
        'CSeq: 1 OPTIONS',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      socket.send(request, port, '127.0.0.1', (error) => error && reject(error));
    });
  });
}
