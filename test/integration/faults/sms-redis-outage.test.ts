import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { sleep, until } from '../../support/wait.js';

const US = '14155550100';

/**
 * How long Redis stays away, counted from the moment it is hung or killed: longer than a queue
 * job's lock (JOB_LOCK_MS, 6 s, in src/callbacks/bullmq-retry-queue.ts), so that every send job
 * running when Redis went away has lost its lock by the time Redis answers again (a lock is
 * renewed at the latest as Redis goes, and lapses at most JOB_LOCK_MS after that, by Redis's own
 * clock: a hung Redis finds it expired when it wakes, a killed one when it loads its file), and
 * the jobs are handed out again. 2 s over the lock, for timers running late.
 */
const OUTAGE_MS = 6000 + 2000;

/**
 * Redis goes away in the middle of an SMS burst the gateway has answered 202, for longer than
 * a queue job's lock lasts. Counted on the SMSC's side: every message answered 202 is submitted
 * exactly once and recorded as sent, and no message answered 503 is ever submitted.
 */
describe('faults: Redis goes away during an SMS burst', () => {
  let smsc: SmscSimulator | undefined;
  let gw: TestGateway | undefined;
  let redis: RedisServer | undefined;
  afterEach(async () => {
    redis?.resume();
    await gw?.close();
    await smsc?.stop();
    await redis?.stop();
    gw = smsc = redis = undefined;
  });

  const post = async (gw: TestGateway, base: string, dst: string[]) => {
    const res = await gw.request('POST', `${base}/Message/`, {
      json: { src: US, dst: dst.join('<'), text: 'burst' },
    });
    return { status: res.status, dst, uuids: (res.body?.message_uuid ?? []) as string[] };
  };

  const numbers = (from: number, count: number) =>
    Array.from({ length: count }, (_, k) => `4474${String(from + k).padStart(8, '0')}`);

  for (const fault of ['hung (SIGSTOP)', 'killed and restarted'] as const)
    it(`submits every accepted message once and no refused one when Redis is ${fault} for longer than a job's lock (${OUTAGE_MS / 1000} s)`, async () => {
      smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
      redis = await startRedis({ persistent: true });
      gw = await startGateway({ redisUrl: redis.url, env: { VOXGATE_SMPP_URL: smsc.url() } });
      const base = `/v1/Account/${gw.main.id}`;
      await gw.request('POST', `${base}/Number/`, {
        json: { numbers: US, carrier: 'c', region: 'r' },
      });
      await smsc.waitForBind();
      const accepted: string[] = [];
      const acceptedUuids: string[] = [];
      for (let k = 0; k < 600; k += 100) {
        const res = await post(gw, base, numbers(k, 100));
        expect(res.status).toBe(202);
        accepted.push(...res.dst);
        acceptedUuids.push(...res.uuids);
      }
      await smsc.waitForSubmits(150, 20_000);
      // Sends around the outage: each is answered 202 (and must go) or an error (and must not,
      // even where some of its writes reach Redis after it was answered). Some start just
      // before Redis goes away, so that it stops in the middle of their writes.
      const during = Promise.all(
        Array.from({ length: 12 }, (_, k) => post(gw!, base, numbers(1000 + k * 5, 5))),
      );
      await new Promise((r) => setTimeout(r, 3));
      if (fault === 'hung (SIGSTOP)') redis.pause();
      else await redis.kill();
      const awayAt = Date.now();
      const refused: string[] = [];
      for (const res of await during) {
        if (res.status === 202) {
          accepted.push(...res.dst);
          acceptedUuids.push(...res.uuids);
        } else {
          expect(res.status).toBe(503);
          refused.push(...res.dst);
        }
      }
      // The outage counts from the fault, the time the sends around it took to be answered
      // (a hung Redis: the store's deadline) included.
      await sleep(OUTAGE_MS - (Date.now() - awayAt));
      if (fault === 'hung (SIGSTOP)') redis.resume();
      else await redis.restart();

      await smsc.waitForSubmits(accepted.length, 60_000);
      // Anything sent twice or sent though refused would come in the seconds after: a job that
      // lost its lock runs again once the stalled check has seen it twice (2 x STALLED_CHECK_MS,
      // 3 s each, src/callbacks/bullmq-retry-queue.ts), after the queue's connection is back
      // (at most 1 s between attempts, src/state/redis-connection.ts), and a failed one 2 s after
      // it failed (rerun.retryDelayMs, src/messaging-composition.ts).
      await sleep(8000);
      const seen = new Map<string, number>();
      for (const s of smsc.submits)
        seen.set(s.destinationAddr, (seen.get(s.destinationAddr) ?? 0) + 1);
      expect({
        twice: [...seen].filter(([, n]) => n > 1).map(([d]) => d),
        missing: accepted.filter((d) => !seen.has(d)),
        refusedButSent: refused.filter((d) => seen.has(d)),
      }).toEqual({ twice: [], missing: [], refusedButSent: [] });
      expect(smsc.submits.length).toBe(accepted.length);
      // Every accepted message is recorded as having gone out.
      const unsent = async () => {
        const states = await Promise.all(
          acceptedUuids.map(
            async (uuid) =>
              (await gw!.request('GET', `${base}/Message/${uuid}/`)).body?.message_state,
          ),
        );
        return states.filter((s) => s !== 'sent' && s !== 'delivered');
      };
      await until(async () => (await unsent()).length === 0, 30_000).catch(() => undefined);
      expect(await unsent()).toEqual([]);
    }, 150_000);
});

describe('faults: Redis restarts empty during an SMS burst', () => {
  it('sends nothing twice, and takes and sends new messages within seconds, with no restart', async () => {
    const smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
    const redis = await startRedis();
    // Listening, as `npm start` runs: the node beats, and its beats find what a wipe took.
    const gw = await startGateway({
      redisUrl: redis.url,
      listen: true,
      env: { VOXGATE_SMPP_URL: smsc.url() },
    });
    try {
      const base = `/v1/Account/${gw.main.id}`;
      const number = () =>
        gw.request('POST', `${base}/Number/`, { json: { numbers: US, carrier: 'c', region: 'r' } });
      await number();
      await smsc.waitForBind();
      const send = (from: number, count: number) =>
        gw.request('POST', `${base}/Message/`, {
          json: {
            src: US,
            dst: Array.from(
              { length: count },
              (_, k) => `4474${String(from + k).padStart(8, '0')}`,
            ).join('<'),
            text: 'burst',
          },
        });
      for (let k = 0; k < 300; k += 100) expect((await send(k, 100)).status).toBe(202);
      await smsc.waitForSubmits(100, 20_000);
      await redis.restart(); // empty: what it held, the queue and the records, is gone
      // The main account comes back by itself; the number is customer data, lost with the rest.
      await until(async () => (await gw.request('GET', `${base}/`)).status === 200, 15_000);
      expect((await number()).status).toBe(201);
      const after = await send(5000, 10);
      expect(after.status).toBe(202);
      await until(
        () => smsc.submits.filter((s) => s.destinationAddr.startsWith('44740000500')).length === 10,
        20_000,
      );
      await new Promise((r) => setTimeout(r, 3000));
      const seen = new Map<string, number>();
      for (const s of smsc.submits)
        seen.set(s.destinationAddr, (seen.get(s.destinationAddr) ?? 0) + 1);
      expect([...seen].filter(([, n]) => n > 1)).toEqual([]);
      const uuid = after.body.message_uuid[9] as string;
      await until(
        async () =>
          (await gw.request('GET', `${base}/Message/${uuid}/`)).body?.message_state === 'delivered',
        10_000,
      );
    } finally {
      await gw.close();
      await smsc.stop();
      await redis.stop();
    }
  }, 90_000);
});
