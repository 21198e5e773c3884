import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientApp, type ReceivedCallback } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { sleep, until } from '../../support/wait.js';

const CALLS = 5;
const OUTAGE_MS = 10_000;

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
 * Calls that end while Redis is hung (SIGSTOP) or killed (and restarted 10 s later with what it
 * had acknowledged): once Redis is back, each call's record is readable with the duration the
 * test measured from outside, and its hangup callback reaches the client application exactly
 * once, after the record (a GET made the moment the callback arrives finds it) and with the
 * record's duration. Meanwhile the node keeps them in its journal under the data directory,
 * with no token in it.
 */
describe('faults: calls end while Redis is away', () => {
  let redis: RedisServer | undefined;
  let gw: TestGateway | undefined;
  let app: ClientApp | undefined;
  let dataDir: string | undefined;
  const placed: PlacedCall[] = [];
  afterEach(async () => {
    redis?.resume();
    await gw?.close();
    await Promise.all(placed.map((p) => p.uas.stop()));
    await Promise.all(placed.map((p) => p.media.close()));
    await app?.close();
    await redis?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    placed.length = 0;
    gw = app = redis = dataDir = undefined;
  });

  async function place(gw: TestGateway, app: ClientApp, waitSeconds: number): Promise<PlacedCall> {
    const media = await RtpPeer.open();
    const mediaOpenedAt = Date.now();
    const uas = await startSippUas({
      scenario: 'carrier-answer.xml',
      variables: { rtp_port: String(media.port) },
    });
    const postedAt = Date.now();
    const fired = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:alice@127.0.0.1:${uas.port}`,
        answer_url: `${app.baseUrl}/answer?wait=${waitSeconds}`,
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
      // Each call waits its own seconds after the answer, then its document ends: 4010.
      app.serve('/answer', (request) => ({
        body: `<Response><Wait length="${new URL(request.url).searchParams.get('wait')}"/></Response>`,
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

      for (let k = 0; k < CALLS; k++) await place(gw, app, 3 + k);
      await until(() => app!.requestsTo('/answer').length === CALLS, 15_000);
      for (const answer of app.requestsTo('/answer')) {
        placed.find((p) => p.requestUuid === answer.params.RequestUUID)!.uuid =
          answer.params.CallUUID;
      }

      if (fault === 'hung (SIGSTOP)') redis.pause();
      else await redis.kill();
      const awayAt = Date.now();
      // Every call ends during the outage (its Wait is over).
      await until(() => gw!.gateway.calls.liveCount === 0, OUTAGE_MS - 1000);
      await sleep(OUTAGE_MS - (Date.now() - awayAt));
      expect(hangups).toEqual([]);
      // What the store could not take is on disk, hangup callbacks included, unsigned.
      const kept = readFileSync(journal, 'utf8');
      for (const call of placed) expect(kept).toContain(call.uuid!);
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
      for (const call of placed) {
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
      expect(readFileSync(journal, 'utf8')).toBe('');
    }, 60_000);
});
