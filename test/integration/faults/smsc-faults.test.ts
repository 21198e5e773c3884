import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { until } from '../../support/wait.js';

const US = '14155550100';

/**
 * The SMSC fails in the middle of a burst the gateway has already answered 202: every accepted
 * message must reach the SMSC exactly once, counted on the SMSC's side, with the carrier's
 * default window and rate, and the bind must go on sending what comes after.
 */
describe('faults: the SMSC fails mid-burst', () => {
  let smsc: SmscSimulator | undefined;
  let gw: TestGateway | undefined;
  let redis: RedisServer | undefined;
  afterEach(async () => {
    await gw?.close();
    await smsc?.stop();
    await redis?.stop();
    gw = smsc = redis = undefined;
  });

  const start = async (options: { redis?: boolean } = {}) => {
    smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
    if (options.redis) redis = await startRedis();
    gw = await startGateway({
      redisUrl: redis?.url,
      env: { VOXGATE_SMPP_URL: smsc.url() },
    });
    const base = `/v1/Account/${gw.main.id}`;
    await gw.request('POST', `${base}/Number/`, {
      json: { numbers: US, carrier: 'c', region: 'r' },
    });
    await smsc.waitForBind();
    return { gw, smsc, base };
  };

  const burst = async (gw: TestGateway, base: string, count: number, from = 0) => {
    const dst = Array.from({ length: count }, (_, k) => `4474${String(from + k).padStart(8, '0')}`);
    const uuids: string[] = [];
    // The API takes up to a few hundred destinations a request.
    for (let k = 0; k < dst.length; k += 100) {
      const res = await gw.request('POST', `${base}/Message/`, {
        json: { src: US, dst: dst.slice(k, k + 100).join('<'), text: 'burst' },
      });
      expect(res.status).toBe(202);
      uuids.push(...(res.body.message_uuid as string[]));
    }
    return { dst, uuids };
  };

  const submittedOnce = (smsc: SmscSimulator, dst: string[]) => {
    const seen = new Map<string, number>();
    for (const s of smsc.submits)
      seen.set(s.destinationAddr, (seen.get(s.destinationAddr) ?? 0) + 1);
    const twice = [...seen].filter(([, n]) => n > 1).map(([d]) => d);
    const missing = dst.filter((d) => !seen.has(d));
    return { twice, missing, total: smsc.submits.length };
  };

  const metric = async (gw: TestGateway, name: string) => {
    const text = (await gw.gateway.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => l.startsWith(name));
    return line === undefined ? null : Number(line.split(' ').pop());
  };

  for (const store of ['embedded', 'redis'] as const)
    it(`sends every accepted message once when the SMSC is killed and restarted mid-burst (${store} store)`, async () => {
      const { gw, smsc, base } = await start({ redis: store === 'redis' });
      const { dst, uuids } = await burst(gw, base, 600);
      await smsc.waitForSubmits(150, 20_000);
      await smsc.kill();
      const before = smsc.submits.length;
      expect(before).toBeLessThan(600);
      await new Promise((r) => setTimeout(r, 2000));
      await smsc.revive();
      await smsc.waitForSubmits(600, 40_000);
      // And what is accepted after the reconnect goes out too.
      const later = await burst(gw, base, 50, 600);
      await smsc.waitForSubmits(650, 20_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(submittedOnce(smsc, [...dst, ...later.dst])).toEqual({
        twice: [],
        missing: [],
        total: 650,
      });
      for (const uuid of [uuids[0]!, uuids[599]!, later.uuids[49]!])
        await until(
          async () =>
            (await gw.request('GET', `${base}/Message/${uuid}/`)).body.message_state ===
            'delivered',
          10_000,
        );
      expect(smsc.binds).toBeGreaterThanOrEqual(2);
      expect(await metric(gw, 'voxgate_smpp_idle_with_work_seconds')).toBe(0);
    }, 90_000);

  it('sends every accepted message once after an unframeable PDU from the SMSC mid-burst', async () => {
    const { gw, smsc, base } = await start();
    const { dst } = await burst(gw, base, 600);
    await smsc.waitForSubmits(200, 20_000);
    // A command_length shorter than a PDU header: the stream cannot be framed any further.
    smsc.sendRaw(Buffer.from('00000005000000', 'hex'));
    await until(() => smsc.binds === 2, 10_000);
    await smsc.waitForSubmits(600, 40_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(submittedOnce(smsc, dst)).toEqual({ twice: [], missing: [], total: 600 });
    expect(gw.logs.join('\n')).toContain('unreadable stream from the carrier');
  }, 90_000);

  it('shows on /metrics how long a bound bind has had work it did not send', async () => {
    const { gw, smsc, base } = await start();
    smsc.hold(); // the SMSC takes submits and never answers: the window fills, nothing moves
    await burst(gw, base, 30);
    await until(() => smsc.heldCount === 10);
    // It reads a second within the 1.5 s the test used to wait (it counts in real time).
    const idle = () => metric(gw, 'voxgate_smpp_idle_with_work_seconds');
    await until(async () => ((await idle()) ?? 0) >= 1, 1500, 50).catch(() => undefined);
    expect(await idle()).toBeGreaterThanOrEqual(1);
    smsc.release();
    await smsc.waitForSubmits(10);
  }, 30_000);
});
