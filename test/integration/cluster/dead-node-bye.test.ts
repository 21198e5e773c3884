import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_CSEQ_MARGIN } from '../../../src/sip/dialog/dialog-snapshot.js';
import { parseMessage, SipRequest, type SipResponse } from '../../../src/sip/message/index.js';
import { answeredCallUuid } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { processApi, spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * The SIP peers of a call whose node dies are told: a surviving node sends each of them (the
 * carrier the call was placed to, the one its Dial reached) a BYE in their dialog, built from
 * what the dead node shared of it, and still closes the call once (record, hangup callback).
 */
const MAIN = { id: 'MA' + 'B'.repeat(18), token: 'Y'.repeat(40) };
const v1 = `/v1/Account/${MAIN.id}`;
const entryKey = (uuid: string) => `voxgate:live-call:${uuid}`;

let redis: RedisServer;
let client: Redis;
let app: ClientApp;
let b: TestGateway;
let d: GatewayProcess | null = null;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  [redis, app] = await Promise.all([startRedis(), ClientApp.start()]);
  client = new Redis(redis.url);
  b = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: { VOXGATE_NODE_ID: 'node-b', VOXGATE_AUTH_ID: MAIN.id, VOXGATE_AUTH_TOKEN: MAIN.token },
  });
});

afterAll(async () => {
  if (d && d.child.exitCode === null) d.child.kill('SIGKILL');
  await Promise.all(carriers.map((c) => c.stop()));
  await Promise.all(peers.map((p) => p.close()));
  await b?.close();
  client?.disconnect();
  await app?.close();
  await redis?.stop();
});

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

/** The SIP messages of SIPp's -trace_msg file, each with whether SIPp received or sent it. */
function traced(log: string): { received: boolean; message: SipRequest | SipResponse }[] {
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

const requests = (seen: ReturnType<typeof traced>, method?: string) =>
  seen
    .filter((m) => m.received && m.message instanceof SipRequest)
    .map((m) => m.message as SipRequest)
    .filter((r) => method === undefined || r.method === method);

describe('a node that dies with an answered call', () => {
  it('has a survivor send a BYE in each dialog of the call to its SIP peer, and closes the call once', async () => {
    d = await spawnGateway({
      VOXGATE_REDIS_URL: redis.url,
      VOXGATE_NODE_ID: 'node-d',
      VOXGATE_AUTH_ID: MAIN.id,
      VOXGATE_AUTH_TOKEN: MAIN.token,
      VOXGATE_SIP_HOST: '127.0.0.1',
      VOXGATE_RTP_HOST: '127.0.0.1',
      VOXGATE_RATE_LIMIT: '0',
    });
    await d.healthy();
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
    const entry = async () => JSON.parse((await client.get(entryKey(uuid))) ?? 'null');
    await until(async () => (await entry())?.childLegs?.[0]?.dialog?.callId !== undefined, 10_000);
    const shared = await entry();
    expect(shared.node).toBe('node-d');
    expect(JSON.stringify(shared)).not.toMatch(/password|credentials/i);

    d.child.kill('SIGKILL');
    await new Promise((resolve) => d!.child.once('exit', resolve));
    // Each carrier's call ends as its scenario says: the BYE in, its 200 out.
    await Promise.all([aCarrier.settled(1, 20_000), bCarrier.settled(1, 20_000)]);
    await until(() => app.requestsTo('/hangup').length === 1, 10_000);

    const bSipPort = b.gateway.sip.addresses.udp.port;
    const childUuid = shared.childLegs[0].uuid as string;
    for (const [uas, dialog] of [
      [aCarrier, shared.dialog],
      [bCarrier, shared.childLegs[0].dialog],
    ] as const) {
      const result = await uas.stop();
      const seen = traced(result.messages);
      const [invite] = requests(seen, 'INVITE');
      const byes = requests(seen, 'BYE');
      expect(invite).toBeDefined();
      expect(byes).toHaveLength(1);
      const bye = byes[0]!;
      // From the survivor: its Via, its UDP port.
      const via = bye.headers.get('Via')!;
      expect(via).toMatch(new RegExp(`^SIP/2\\.0/UDP 127\\.0\\.0\\.1:${bSipPort};branch=z9hG4bK`));
      // The dialog of the INVITE the dead node sent: same Call-ID, the gateway's tag in From,
      // the carrier's tag (from its 200) in To.
      const ok = seen.find((m) => !m.received && 'status' in m.message && m.message.status === 200)!
        .message as SipResponse;
      expect(bye.callId()).toBe(invite!.callId());
      expect(bye.from().tag).toBe(invite!.from().tag);
      expect(bye.to().tag).toBe(ok.to().tag);
      expect(bye.to().tag).toMatch(/^carrier-/);
      expect(bye.uri).toBe(dialog.remoteTarget);
      // A CSeq above every request it saw in the dialog (the INVITE and its ACK).
      const highest = Math.max(
        ...requests(seen)
          .filter((r) => r !== bye)
          .map((r) => r.cseq().seq),
      );
      expect(bye.cseq()).toEqual({ seq: invite!.cseq().seq + SNAPSHOT_CSEQ_MARGIN, method: 'BYE' });
      expect(bye.cseq().seq).toBeGreaterThan(highest);
      expect(bye.headers.has('Authorization')).toBe(false);
      expect(result.errors).toEqual([]);
      expect(result.successful).toBe(1);
    }

    // The survivor had each BYE answered 200, and logged it.
    const answered = () =>
      b.logs
        .map((line) => JSON.parse(line))
        .filter((l) => l.msg === 'node failure: BYE to a peer answered');
    await until(() => answered().length === 2, 5000).catch((e) => {
      console.log(b.logs.filter((l) => /BYE|node failure/.test(l)));
      throw e;
    });
    expect(
      answered()
        .map((l) => [l.legUuid, l.status])
        .sort(),
    ).toEqual(
      [
        [uuid, 200],
        [childUuid, 200],
      ].sort(),
    );
    expect(b.logs.filter((l) => l.includes('no BYE to a peer'))).toEqual([]);

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
});
