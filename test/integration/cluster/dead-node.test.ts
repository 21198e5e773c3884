import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_FAILURE_REASON } from '../../../src/cluster/dead-call-streams.js';
import { recordTimeMs } from '../../../src/state/state.js';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';
import { TEST_HEARTBEAT_ENV } from '../../support/cluster-heartbeat.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { spawnGateway, type GatewayProcess, processApi } from '../../support/gateway-process.js';
import { freePort } from '../../support/free-port.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import {
  registerEndpoint,
  tcpChannel,
  udpChannel,
  wsChannel,
  type SipChannel,
} from '../../support/sip-registration.js';
import type { SippUas } from '../../support/sipp.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { StreamServer } from '../../support/stream-server.js';
import { until } from '../../support/wait.js';

/**
 * What a node killed with SIGKILL leaves behind, and how a surviving node takes it over: its
 * calls' audio streams closed (record and status callback), the registrations only its
 * connections reached removed, and its queued SMS and pending callback retry (BullMQ jobs)
 * run by the survivor. Both nodes have the cluster tests' faster heartbeat.
 */
const MAIN = { id: 'MA' + 'K'.repeat(18), token: 'W'.repeat(40) };
const TOKENS = { accountToken: MAIN.token, mainToken: MAIN.token };
const US = '14155550100';
const UK = '447400123456';
const v1 = `/v1/Account/${MAIN.id}`;

let redis: RedisServer;
let app: ClientApp;
let smsc: SmscSimulator;
let streams: StreamServer;
let d: GatewayProcess | null = null;
let a: TestGateway | null = null;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];
const channels: SipChannel[] = [];

beforeAll(async () => {
  redis = await startRedis();
  app = await ClientApp.start();
  smsc = await SmscSimulator.start();
  streams = await StreamServer.start();
});

afterAll(async () => {
  if (d && d.child.exitCode === null) d.child.kill('SIGKILL');
  for (const channel of channels) channel.close();
  await Promise.all(carriers.map((c) => c.stop()));
  await Promise.all(peers.map((p) => p.close()));
  await a?.close();
  await streams.close();
  await smsc.stop();
  await app.close();
  await redis.stop();
});

/** The gateway process's REST API as the main account. */
const overHttp = (port: number): TestGateway => processApi(port, MAIN);

const bindingsOf = async (gw: TestGateway, endpointId: string) =>
  (await gw.gateway.state.registrations.get(MAIN.id, `endpoint:${endpointId}`))?.bindings ?? [];

describe('a node that dies', () => {
  it('leaves its streams closed, its connection bindings removed, and its queued work to a survivor', async () => {
    const sipPort = await freePort();
    const wsPort = await freePort();
    const smppUrl = smsc.url('enquire_link=1');
    d = await spawnGateway({
      VOXGATE_REDIS_URL: redis.url,
      VOXGATE_NODE_ID: 'node-d',
      VOXGATE_AUTH_ID: MAIN.id,
      VOXGATE_AUTH_TOKEN: MAIN.token,
      VOXGATE_SIP_HOST: '127.0.0.1',
      VOXGATE_RTP_HOST: '127.0.0.1',
      VOXGATE_SIP_PORT: String(sipPort),
      VOXGATE_SIP_WS_PORT: String(wsPort),
      VOXGATE_SMPP_URL: smppUrl,
      VOXGATE_RATE_LIMIT: '0',
      ...TEST_HEARTBEAT_ENV,
    });
    await d.healthy();
    await smsc.waitForBind();
    const viaD = overHttp(d.port);

    // Node D alone runs everything below, so that all of it is D's when it dies.
    const placed = await placeCarrierCall(
      { gw: viaD, app, carriers, peers },
      '<Response><Wait length="60"/></Response>',
      { hangup_url: `${app.baseUrl}/hangup` },
    );
    const callUuid = await answeredCallUuid(app, placed.requestUuid);
    const started = await viaD.request('POST', `${v1}/Call/${callUuid}/Stream/`, {
      json: {
        service_url: streams.url,
        status_callback_url: `${app.baseUrl}/stream-status`,
        extra_headers: 'tenant=acme',
      },
    });
    expect(started.status).toBe(201);
    const streamId = started.body.stream_id as string;
    const connection = await streams.connection();
    await until(() => connection.of('start').length > 0, 5000);
    await until(() => app.requestsTo('/stream-status').length === 1, 5000);

    // alice: over a WebSocket and over TCP, to D; bob: over UDP, and over TCP through a proxy.
    const endpoint = async (username: string) => {
      const res = await viaD.request('POST', `${v1}/Endpoint/`, {
        json: { username, password: 'secret-pass-1', alias: username },
      });
      expect(res.status).toBe(201);
      const id = res.body.endpoint_id as string;
      return { id, username: res.body.username as string, password: 'secret-pass-1' };
    };
    const alice = await endpoint('alice');
    const bob = await endpoint('bob');
    const open = async (channel: Promise<SipChannel>) => {
      channels.push(await channel);
      return channels.at(-1)!;
    };
    const path = ['<sip:proxy.example.com;lr>'];
    for (const [channel, who, options] of [
      [await open(wsChannel(wsPort)), alice, {}],
      [await open(tcpChannel(sipPort)), alice, {}],
      [await open(udpChannel(sipPort)), bob, {}],
      [await open(tcpChannel(sipPort)), bob, { path }],
    ] as const)
      expect((await registerEndpoint(channel, who, options)).status).toBe(200);

    // An SMS D takes from the queue and is submitting (the SMSC holds its answer), and its
    // "queued" status callback refused: D schedules the retry (in 60 s).
    await viaD.request('POST', `${v1}/Number/`, {
      json: { numbers: US, carrier: 'c', region: 'r' },
    });
    app.serve('/status', { status: 500, body: '' });
    smsc.hold();
    const sent = await viaD.request('POST', `${v1}/Message/`, {
      json: { src: US, dst: UK, text: 'sent by the survivor', url: `${app.baseUrl}/status` },
    });
    expect(sent.status).toBe(202);
    const messageUuid = sent.body.message_uuid[0] as string;
    const queueConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const retries = new Queue('voxgate-message-callbacks', { connection: queueConnection });
    try {
      await until(
        async () => smsc.heldCount === 1 && (await retries.getDelayedCount()) === 1,
        5000,
      );
      app.serve('/status', { status: 200, body: '' });

      // The survivor, then D dies.
      a = await startGateway({
        redisUrl: redis.url,
        listen: true,
        env: {
          VOXGATE_NODE_ID: 'node-a',
          VOXGATE_AUTH_ID: MAIN.id,
          VOXGATE_AUTH_TOKEN: MAIN.token,
          VOXGATE_SMPP_URL: smppUrl,
          ...TEST_HEARTBEAT_ENV,
        },
      });
      expect(a.main).toEqual(MAIN);
      await until(() => smsc.sessions.size === 2, 5000);
      d.child.kill('SIGKILL');
      const killedAt = Date.now();
      // D's bind is gone: its held submit was never answered; the survivor's is not held.
      await until(() => smsc.sessions.size === 1, 5000);
      smsc.release();

      // The stream: closed as failed at D's last heartbeat, and its status callback sent.
      await until(() => app.requestsTo('/stream-status').length === 2, 10_000);
      const dropped = app.requestsTo('/stream-status')[1]!;
      expect(dropped.params).toEqual({
        Event: 'DroppedStream',
        Status: 'failed',
        StreamID: streamId,
        CallUUID: callUuid,
        ServiceURL: streams.url,
        ExtraHeaders: 'tenant=acme',
        Reason: NODE_FAILURE_REASON,
        Timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/),
      });
      expectValidSignatures(dropped, TOKENS);
      expect(Date.now() - killedAt).toBeLessThan(6000);
      const record = await a.gateway.state.streams.get(MAIN.id, streamId);
      expect(record).toMatchObject({ status: 'failed', call_uuid: callUuid });
      expect(recordTimeMs(record!.end_time!)).toBeLessThanOrEqual(killedAt);
      expect(recordTimeMs(record!.end_time!)).toBeGreaterThan(killedAt - 2000);
      // Billed from its connection to then, per started minute.
      expect(record!.rounded_bill_duration).toBe(record!.bill_duration === 0 ? 0 : 60);
      // Its call closed after it, with the node failure's cause.
      await until(() => app.requestsTo('/hangup').length === 1, 5000);
      expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
        CallUUID: callUuid,
        HangupCauseCode: '5000',
        HangupSource: 'Error',
      });

      // The bindings only D's connections reached are gone; UDP and Path ones stay.
      await until(async () => (await bindingsOf(a!, alice.id)).length === 0, 5000);
      expect((await bindingsOf(a, bob.id)).map((b) => [b.protocol, b.path?.length])).toEqual([
        ['UDP', 0],
        ['TCP', 1],
      ]);
      const view = await a.request('GET', `${v1}/Endpoint/${alice.id}/`);
      expect(view.body.sip_registered).toBe('false');

      // The SMS D was submitting: its job stalls (D holds it no more) and the survivor sends it.
      await until(() => smsc.submits.length === 1, 15_000);
      expect(smsc.submits[0]).toMatchObject({ sourceAddr: US, destinationAddr: UK });
      await until(
        async () =>
          (await a!.request('GET', `${v1}/Message/${messageUuid}/`)).body.message_state === 'sent',
        5000,
      );

      // D's callback retry waits in Redis (due in 60 s; brought forward here): the survivor
      // delivers it, signed.
      const [retry] = await retries.getDelayed();
      await retry!.promote();
      await until(
        () => app.requestsTo('/status').filter((r) => r.params.Status === 'queued').length === 2,
        5000,
      );
      const redelivered = app.requestsTo('/status').filter((r) => r.params.Status === 'queued')[1]!;
      expect(redelivered.params.MessageUUID).toBe(messageUuid);
      expectValidSignatures(redelivered, TOKENS);
    } finally {
      await retries.close();
      await queueConnection.quit();
    }
  });
});
