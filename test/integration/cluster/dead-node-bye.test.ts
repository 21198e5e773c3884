import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_CSEQ_MARGIN } from '../../../src/sip/dialog/dialog-snapshot.js';
import { parseMessage, SipRequest, SipResponse } from '../../../src/sip/message/index.js';
import { answeredCallUuid } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { TEST_HEARTBEAT_ENV } from '../../support/cluster-heartbeat.js';
import { freePort } from '../../support/free-port.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { processApi, spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { runSipp, startSippUas, type SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * The SIP peers of a call whose node dies are told: a surviving node sends each of them (the
 * carrier the call was placed to, the one its Dial reached, the caller of an inbound call) a
 * BYE in their dialog, built from what the dead node shared of it, and still closes the call
 * once (record, hangup callback). Every node has the cluster tests' faster heartbeat.
 */
const MAIN = { id: 'MA' + 'B'.repeat(18), token: 'Y'.repeat(40) };
const v1 = `/v1/Account/${MAIN.id}`;
const entryKey = (uuid: string) => `voxgate:live-call:${uuid}`;
const INBOUND_NUMBER = '14155550123';

let redis: RedisServer;
let client: Redis;
let app: ClientApp;
let b: TestGateway;
const dead: GatewayProcess[] = [];
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  [redis, app] = await Promise.all([startRedis(), ClientApp.start()]);
  client = new Redis(redis.url);
  b = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: {
      VOXGATE_NODE_ID: 'node-b',
      VOXGATE_AUTH_ID: MAIN.id,
      VOXGATE_AUTH_TOKEN: MAIN.token,
      ...TEST_HEARTBEAT_ENV,
    },
  });
});

afterAll(async () => {
  for (const d of dead) if (d.child.exitCode === null) d.child.kill('SIGKILL');
  await Promise.all(carriers.map((c) => c.stop()));
  await Promise.all(peers.map((p) => p.close()));
  await b?.close();
  client?.disconnect();
  await app?.close();
  await redis?.stop();
});

/** A node of the gateway as its own process, on a SIP port of its own, to be killed. */
async function nodeToKill(node: string, sipPort: number): Promise<GatewayProcess> {
  const d = await spawnGateway({
    VOXGATE_REDIS_URL: redis.url,
    VOXGATE_NODE_ID: node,
    VOXGATE_AUTH_ID: MAIN.id,
    VOXGATE_AUTH_TOKEN: MAIN.token,
    VOXGATE_SIP_HOST: '127.0.0.1',
    VOXGATE_RTP_HOST: '127.0.0.1',
    VOXGATE_SIP_PORT: String(sipPort),
    VOXGATE_RATE_LIMIT: '0',
    ...TEST_HEARTBEAT_ENV,
  });
  dead.push(d);
  await d.healthy();
  return d;
}

async function kill(d: GatewayProcess): Promise<void> {
  d.child.kill('SIGKILL');
  await new Promise((resolve) => d.child.once('exit', resolve));
}

/**
 * A SIPp carrier that answers, and answers a BYE from any node at its Via
 * (carrier-answer-any-node.xml), keeping every message it saw.
 */
async function carrier(): Promise<SippUas> {
  const media = await RtpPeer.open();
  peers.push(media);
  const uas = await startSippUas({
    scenario: 'carrier-answer-any-node.xml',
    variables: { rtp_port: String(media.port) },
    traceMessages: true,
  });
  carriers.push(uas);
  return uas;
}

/** A call's live entry, as the nodes share it. */
async function liveEntry(uuid: string) {
  return JSON.parse((await client.get(entryKey(uuid))) ?? 'null');
}

type Traced = { received: boolean; message: SipRequest | SipResponse }[];

/** The SIP messages of SIPp's -trace_msg file, each with whether SIPp received or sent it. */
function traced(log: string): Traced {
  return log
    .split(/^-{10,}.*$/m)
    .map((chunk) => chunk.trim())
    .filter((chunk) => /message (received|sent)/.test(chunk.split('\n')[0] ?? ''))
    .map((chunk) => {
      const [head, ...rest] = chunk.split('\n');
      const text = `${rest.join('\n').trim().replace(/\r?\n/g, '\r\n')}\r\n\r\n`;
      return {
        received: /received/.test(head!),
        message: parseMessage(Buffer.from(text, 'latin1')),
      };
    });
}

const requests = (seen: Traced, method?: string) =>
  seen
    .filter((m) => m.received && m.message instanceof SipRequest)
    .map((m) => m.message as SipRequest)
    .filter((r) => method === undefined || r.method === method);

/** The one 200 to the INVITE that SIPp sent (a carrier) or received (a caller). */
const inviteOk = (seen: Traced, sent: boolean) =>
  seen.find(
    (m) =>
      m.received !== sent &&
      m.message instanceof SipResponse &&
      m.message.status === 200 &&
      m.message.cseq().method === 'INVITE',
  )!.message as SipResponse;

/**
 * The one BYE the peer received: from the survivor (its Via, its UDP port), with the Call-ID of
 * the INVITE (whichever side sent it), to the dialog's remote target, with a CSeq above every
 * request the peer received.
 */
function survivorBye(seen: Traced, remoteTarget: string): SipRequest {
  const byes = requests(seen, 'BYE');
  expect(byes).toHaveLength(1);
  const bye = byes[0]!;
  const port = b.gateway.sip.addresses.udp.port;
  expect(bye.headers.get('Via')).toMatch(
    new RegExp(`^SIP/2\\.0/UDP 127\\.0\\.0\\.1:${port};branch=z9hG4bK`),
  );
  const invite = seen.find((m) => m.message instanceof SipRequest && m.message.method === 'INVITE');
  expect(bye.callId()).toBe((invite!.message as SipRequest).callId());
  expect(bye.uri).toBe(remoteTarget);
  const others = requests(seen).filter((r) => r !== bye);
  expect(bye.cseq().seq).toBeGreaterThan(Math.max(...others.map((r) => r.cseq().seq)));
  expect(bye.headers.has('Authorization')).toBe(false);
  return bye;
}

/** What the survivor logged of its BYEs' answers: [leg uuid, status], sorted. */
function byeAnswers(): [string, number][] {
  return b.logs
    .map((line) => JSON.parse(line))
    .filter((l) => l.msg === 'node failure: BYE answered')
    .map((l): [string, number] => [l.legUuid, l.status])
    .sort();
}

describe('a node that dies with an answered call', () => {
  it('has a survivor BYE the carrier it placed the call to and the one its Dial reached', async () => {
    const d = await nodeToKill('node-d1', await freePort());
    const [aCarrier, bCarrier] = await Promise.all([carrier(), carrier()]);
    app.serve('/answer', {
      body: `<Response><Dial><User>sip:bob@127.0.0.1:${bCarrier.port}</User></Dial></Response>`,
    });
    // Both nodes are idle: the node asked places the call itself.
    const fired = await processApi(d.port, MAIN).request('POST', `${v1}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:alice@127.0.0.1:${aCarrier.port}`,
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    expect(fired.status).toBe(201);
    const uuid = await answeredCallUuid(app, fired.body.request_uuid as string);
    // Dial's B leg answered: the call's entry holds both dialogs.
    await until(async () => (await liveEntry(uuid))?.childLegs?.[0]?.dialog != null, 10_000);
    const shared = await liveEntry(uuid);
    expect(shared.node).toBe('node-d1');
    expect(JSON.stringify(shared)).not.toMatch(/password|credentials/i);
    const childUuid = shared.childLegs[0].uuid as string;

    await kill(d);
    // Each carrier's call ends as its scenario says: the BYE in, its 200 out.
    await Promise.all([aCarrier.settled(1, 20_000), bCarrier.settled(1, 20_000)]);
    await until(() => app.requestsTo('/hangup').length === 1, 10_000);

    for (const [uas, dialog] of [
      [aCarrier, shared.dialog],
      [bCarrier, shared.childLegs[0].dialog],
    ] as const) {
      const result = await uas.stop();
      const seen = traced(result.messages);
      const bye = survivorBye(seen, dialog.remoteTarget);
      // The gateway placed the call: its tag is the INVITE's From tag, the carrier's the 200's.
      const invite = requests(seen, 'INVITE')[0]!;
      expect(bye.from().tag).toBe(invite.from().tag);
      expect(bye.to().tag).toBe(inviteOk(seen, true).to().tag);
      expect(bye.to().tag).toMatch(/^carrier-/);
      expect(bye.cseq()).toEqual({ seq: invite.cseq().seq + SNAPSHOT_CSEQ_MARGIN, method: 'BYE' });
      expect(result.errors).toEqual([]);
      expect(result.successful).toBe(1);
    }

    // The survivor had each BYE answered 200.
    await until(() => byeAnswers().length === 2, 5000);
    expect(byeAnswers()).toEqual(
      (
        [
          [uuid, 200],
          [childUuid, 200],
        ] as [string, number][]
      ).sort(),
    );
    expect(b.logs.filter((l) => /BYE (unanswered|not sent)/.test(l))).toEqual([]);

    // The call is closed once, as before: its record and its B leg's, one hangup callback.
    const record = (await b.request('GET', `${v1}/Call/${uuid}/`)).body;
    expect(record).toMatchObject({ call_uuid: uuid, hangup_cause_code: 5000 });
    const child = (await b.request('GET', `${v1}/Call/${childUuid}/`)).body;
    expect(child).toMatchObject({ call_uuid: childUuid, parent_call_uuid: uuid });
    expect(app.requestsTo('/hangup')).toHaveLength(1);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
      CallUUID: uuid,
      HangupCauseCode: '5000',
      HangupSource: 'Error',
    });
    await until(async () => (await client.exists(entryKey(uuid))) === 0, 5000);
    expect(b.gateway.calls.liveCount).toBe(0);
  }, 60_000);

  it('has a survivor BYE the caller of an inbound call, with the gateway tag in From', async () => {
    app.reset();
    const application = await b.request('POST', `${v1}/Application/`, {
      json: {
        app_name: 'front desk',
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    expect(application.status).toBe(201);
    const number = await b.request('POST', `${v1}/Number/`, {
      json: {
        numbers: INBOUND_NUMBER,
        carrier: 'Own SIP',
        region: 'West',
        app_id: application.body.app_id,
      },
    });
    expect(number.status).toBeLessThan(300);
    app.serve('/answer', { body: '<Response><Wait length="60"/></Response>' });
    const sipPort = await freePort();
    const d = await nodeToKill('node-d2', sipPort);

    const caller = runSipp({
      scenario: 'caller-hung-up.xml',
      target: { host: '127.0.0.1', port: sipPort },
      calls: 1,
      timeoutMs: 30_000,
      traceMessages: true,
      extraArgs: ['-s', INBOUND_NUMBER],
    });
    await until(() => app.requestsTo('/answer').length === 1, 10_000);
    const uuid = app.requestsTo('/answer')[0]!.params.CallUUID!;
    await until(async () => (await liveEntry(uuid))?.dialog != null, 10_000);
    const shared = await liveEntry(uuid);
    expect(shared).toMatchObject({ node: 'node-d2', direction: 'inbound' });

    await kill(d);
    const result = await caller;
    expect(result.errors).toEqual([]);
    expect(result.outcome).toBe('all-succeeded');
    const seen = traced(result.messages);
    const bye = survivorBye(seen, shared.dialog.remoteTarget);
    // The caller placed the call: the gateway's tag is the 200's To tag, the caller's its own.
    const sent = seen.find((m) => !m.received && m.message instanceof SipRequest)!
      .message as SipRequest;
    expect(sent.method).toBe('INVITE');
    expect(bye.from().tag).toBe(inviteOk(seen, false).to().tag);
    expect(bye.to().tag).toBe(sent.from().tag);
    expect(bye.to().tag).toMatch(/^uac-/);
    // The gateway had sent no request in the dialog: its first CSeq is the margin.
    expect(bye.cseq()).toEqual({ seq: SNAPSHOT_CSEQ_MARGIN, method: 'BYE' });

    await until(() => byeAnswers().some(([leg]) => leg === uuid), 5000);
    expect(byeAnswers().filter(([leg]) => leg === uuid)).toEqual([[uuid, 200]]);
    await until(() => app.requestsTo('/hangup').length === 1, 10_000);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
      CallUUID: uuid,
      Direction: 'inbound',
      HangupCauseCode: '5000',
    });
    const record = (await b.request('GET', `${v1}/Call/${uuid}/`)).body;
    expect(record).toMatchObject({ call_uuid: uuid, hangup_cause_code: 5000 });
  }, 60_000);
});
