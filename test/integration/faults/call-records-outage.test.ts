import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientApp, type ReceivedCallback } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { StreamServer } from '../../support/stream-server.js';
import { sleep, until } from '../../support/wait.js';

const CALLS = 5;
/** Every call ends within this of Redis going away (the last one's Wait is 7 s). */
const CALLS_END_WITHIN_MS = 9000;

/** One call as the test sees it from outside: when it was asked for, and its carrier's media. */
interface PlacedCall {
  requestUuid: string;
  postedAt: number;
  media: RtpPeer;
  /** When the media peer opened: its packets' times count from there. */
  mediaOpenedAt: number;
  uas: SippUas;
  uuid?: string;
}

/**
 * Calls that end while Redis is hung (SIGSTOP) or killed (and restarted with what it had
 * acknowledged once the node has given up writing each call's record and kept it in its
 * journal), one of them with an audio stream and one bridged to a B leg by Dial: once
 * Redis is back, each call's record is readable with the duration the test measured from
 * outside, the stream's and the B leg's records are there, and each hangup callback reaches the
 * client application exactly once, after the record (a GET made the moment the callback
 * arrives finds it) and with the record's duration. Meanwhile the node keeps all of it in its
 * journal under the data directory, with no token in it.
 */
describe('faults: calls end while Redis is away', () => {
  let redis: RedisServer | undefined;
  let gw: TestGateway | undefined;
  let app: ClientApp | undefined;
  let dataDir: string | undefined;
  let bot: StreamServer | undefined;
  const placed: PlacedCall[] = [];
  afterEach(async () => {
    redis?.resume();
    await gw?.close();
    await Promise.all(placed.map((p) => p.uas.stop()));
    await Promise.all(placed.map((p) => p.media.close()));
    await app?.close();
    await bot?.close();
    await redis?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    placed.length = 0;
    gw = app = redis = dataDir = bot = undefined;
  });

  /** A SIPp carrier that answers, its media a plain RTP peer. */
  async function carrier(): Promise<Omit<PlacedCall, 'requestUuid' | 'postedAt'>> {
    const media = await RtpPeer.open();
    const mediaOpenedAt = Date.now();
    const uas = await startSippUas({
      scenario: 'carrier-answer.xml',
      variables: { rtp_port: String(media.port) },
    });
    return { media, mediaOpenedAt, uas };
  }

  /** Places call number `k`, whose answer document is the k-th the app serves. */
  async function place(gw: TestGateway, app: ClientApp, k: number): Promise<PlacedCall> {
    const { media, mediaOpenedAt, uas } = await carrier();
    const postedAt = Date.now();
    const fired = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:alice@127.0.0.1:${uas.port}`,
        answer_url: `${app.baseUrl}/answer?call=${k}`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    expect(fired.status).toBe(201);
    const call = {
      requestUuid: fired.body.request_uuid as string,
      postedAt,
      media,
      mediaOpenedAt,
      uas,
    };
    placed.push(call);
    return call;
  }

  for (const fault of ['hung (SIGSTOP)', 'killed and restarted'] as const)
    it(`writes the record and then sends the one hangup callback of each call that ended while Redis was ${fault}`, async () => {
      redis = await startRedis({ persistent: true });
      app = await ClientApp.start();
      dataDir = mkdtempSync(join(tmpdir(), 'voxgate-data-'));
      gw = await startGateway({
        listen: true,
        redisUrl: redis.url,
        env: { VOXGATE_DATA_DIR: dataDir },
      });
      const journal = join(dataDir, 'journal', 'call-records.jsonl');
      const base = `/v1/Account/${gw.main.id}`;
      bot = await StreamServer.start();
      const bLeg = await carrier();
      placed.push({ ...bLeg, requestUuid: '', postedAt: 0 });
      // Each call ends when its document does (4010), a second later than the one before: one
      // streams meanwhile, one is bridged to a B leg for its last 5 s.
      const documents = [
        '<Wait length="3"/>',
        `<Stream>${bot.url}</Stream><Wait length="4"/>`,
        `<Dial timeLimit="5"><User>sip:bob@127.0.0.1:${bLeg.uas.port}</User></Dial>`,
        '<Wait length="6"/>',
        '<Wait length="7"/>',
      ];
      app.serve('/answer', (request) => ({
        body: `<Response>${documents[Number(new URL(request.url).searchParams.get('call'))]}</Response>`,
      }));
      // The record as the API shows it the moment each hangup callback arrives.
      const readOnArrival = new Map<string, Promise<number>>();
      const hangups: ReceivedCallback[] = [];
      app.serve('/hangup', (request) => {
        const uuid = new URLSearchParams(request.body).get('CallUUID')!;
        hangups.push(request);
        readOnArrival.set(
          uuid,
          gw!.request('GET', `${base}/Call/${uuid}/`).then((r) => r.status),
        );
        return { body: '' };
      });

      const calls: PlacedCall[] = [];
      for (let k = 0; k < CALLS; k++) calls.push(await place(gw, app, k));
      await until(() => app!.requestsTo('/answer').length === CALLS, 15_000);
      for (const answer of app.requestsTo('/answer')) {
        calls.find((p) => p.requestUuid === answer.params.RequestUUID)!.uuid =
          answer.params.CallUUID;
      }
      const [streamed, bridged] = [calls[1]!.uuid!, calls[2]!.uuid!];
      await bot.connection(0);
      await until(() => bLeg.media.received.length > 0, 5000);

      if (fault === 'hung (SIGSTOP)') redis.pause();
      else await redis.kill();
      const awayAt = Date.now();
      // Every call ends during the outage (its Wait is over).
      await until(() => gw!.gateway.calls.liveCount === 0, CALLS_END_WITHIN_MS);
      // Redis stays away until the node has given up on the store for every call (within the
      // 10 s this outage used to last): each call's hangup callback is in the journal, kept with
      // its record once the record's write failed (on a hung Redis, once it outlasted the store's
      // deadline, STORE_CALL_MS) or behind a record already kept. The node then waits on no write
      // of them; a hung Redis still carries out the first tries when it wakes (one record each).
      await until(
        () => {
          const text = readFileSync(journal, 'utf8');
          return calls.every((call) => text.includes(`"key":"hangup:${call.uuid}"`));
        },
        10_000 - (Date.now() - awayAt),
        50,
      );
      expect(hangups).toEqual([]);
      // What the store could not take is on disk, hangup callbacks included, unsigned.
      const kept = readFileSync(journal, 'utf8');
      for (const call of calls) expect(kept).toContain(call.uuid!);
      expect(kept).toContain(`"parent_call_uuid":"${bridged}"`);
      expect(kept).toContain(`"kind":"stream"`);
      expect(kept).toContain(`${app.baseUrl}/hangup`);
      expect(kept).not.toContain(gw.main.token);

      const backAt = Date.now();
      if (fault === 'hung (SIGSTOP)') redis.resume();
      else await redis.restart();
      await until(() => hangups.length >= CALLS, 20_000);
      // A second callback for any call would come within the next sweeps.
      await sleep(3000);

      const perCall = new Map<string, number>();
      for (const h of hangups) {
        const uuid = new URLSearchParams(h.body).get('CallUUID')!;
        perCall.set(uuid, (perCall.get(uuid) ?? 0) + 1);
      }
      expect([...perCall.values()]).toEqual(Array(CALLS).fill(1));
      for (const call of calls) {
        const record = await gw.request('GET', `${base}/Call/${call.uuid}/`);
        expect(record.status).toBe(200);
        expect(record.body).toMatchObject({
          call_uuid: call.uuid,
          hangup_cause_code: 4010,
          call_state: 'ANSWER',
        });
        // From the request to the last audio the carrier got; the record's times are whole
        // seconds (under 1 s off), the test's view of the start and end a few ms more.
        const lastAudio = call.mediaOpenedAt + call.media.received.at(-1)!.at;
        const measured = (lastAudio - call.postedAt) / 1000;
        expect(Math.abs(record.body.call_duration - measured)).toBeLessThan(1.2);
        const hangup = hangups.find(
          (h) => new URLSearchParams(h.body).get('CallUUID') === call.uuid,
        )!;
        const params = Object.fromEntries(new URLSearchParams(hangup.body));
        expect(params).toMatchObject({ Event: 'Hangup', HangupCauseCode: '4010' });
        expect(Number(params.Duration)).toBe(record.body.call_duration);
        expect(hangup.receivedAt).toBeGreaterThanOrEqual(backAt);
        expect(await readOnArrival.get(call.uuid!)).toBe(200);
      }
      const streams = await gw.request('GET', `${base}/Call/${streamed}/Stream/`);
      expect(streams.body.objects).toEqual([
        expect.objectContaining({ call_uuid: streamed, end_time: expect.any(String) }),
      ]);
      const list = await gw.request('GET', `${base}/Call/?limit=20`);
      const bRecords = list.body.objects.filter(
        (c: { parent_call_uuid: string | null }) => c.parent_call_uuid === bridged,
      );
      expect(bRecords).toEqual([
        expect.objectContaining({ call_direction: 'outbound', to_number: expect.any(String) }),
      ]);
      expect(readFileSync(journal, 'utf8')).toBe('');
    }, 60_000);
});
