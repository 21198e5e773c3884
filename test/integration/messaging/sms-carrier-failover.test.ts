import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { until } from '../../support/wait.js';

/**
 * Two SMPP carriers in one VOXGATE_SMPP_URL: `uk` takes +44 by prefix, `rest` is the default
 * route. While every bind of `uk` is down, messages to +44 go to `rest`; once `uk` binds
 * again they go back to it. Each message is counted on the SMSCs' side: submitted once, to one
 * of them.
 */
const US = '14155550100';
const UK = '447400123456';

let uk: SmscSimulator;
let rest: SmscSimulator;
let gw: TestGateway;
let base: string;

beforeAll(async () => {
  uk = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
  rest = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
  gw = await startGateway({
    env: {
      VOXGATE_SMPP_URL: `${uk.url('name=uk&prefixes=44&enquire_link=1')} ${rest.url('name=rest&enquire_link=1')}`,
    },
  });
  base = `/v1/Account/${gw.main.id}`;
  await gw.request('POST', `${base}/Number/`, { json: { numbers: US, carrier: 'c', region: 'r' } });
  await uk.waitForBind();
  await rest.waitForBind();
});

afterAll(async () => {
  await gw?.close();
  await uk?.stop();
  await rest?.stop();
});

async function send(text: string): Promise<string> {
  const res = await gw.request('POST', `${base}/Message/`, {
    json: { src: US, dst: UK, text },
  });
  expect(res.status).toBe(202);
  return res.body.message_uuid[0] as string;
}

const bound = (carrier: string) =>
  gw.gateway.messaging.carriers.status().some((b) => b.carrier === carrier && b.state === 'bound');

const texts = (smsc: SmscSimulator) => smsc.submits.map((s) => s.shortMessage.toString('latin1'));

async function delivered(uuid: string): Promise<Record<string, unknown>> {
  let record: Record<string, unknown> = {};
  await until(async () => {
    record = (await gw.request('GET', `${base}/Message/${uuid}/`)).body;
    return record.message_state === 'delivered';
  }, 10_000);
  return record;
}

describe('SMS carrier failover', () => {
  it('sends by prefix, fails over to the default route while the carrier is down, and back', async () => {
    await delivered(await send('first to uk'));
    expect(texts(uk)).toEqual(['first to uk']);
    expect(texts(rest)).toEqual([]);

    await uk.kill();
    // The gateway sees its bind drop (the connection closes at once).
    await until(() => !bound('uk'), 10_000);
    const during = await Promise.all(['while down 1', 'while down 2', 'while down 3'].map(send));
    for (const uuid of during) await delivered(uuid);
    expect(texts(rest).sort()).toEqual(['while down 1', 'while down 2', 'while down 3']);
    expect(texts(uk)).toEqual(['first to uk']);

    await uk.revive();
    await until(() => bound('uk'), 15_000);
    await delivered(await send('back to uk'));
    expect(texts(uk)).toEqual(['first to uk', 'back to uk']);
    expect(texts(rest).sort()).toEqual(['while down 1', 'while down 2', 'while down 3']);
  }, 60_000);

  it('loses and doubles nothing when the carrier dies mid-burst: each message on one SMSC', async () => {
    const before = { uk: uk.submits.length, rest: rest.submits.length };
    const burst = Array.from({ length: 40 }, (_, i) => `burst ${i}`);
    const sending = Promise.all(
      burst.map(async (text, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 10));
        return send(text);
      }),
    );
    await until(() => uk.submits.length - before.uk >= 8, 10_000);
    await uk.kill();
    const uuids = await sending;
    await new Promise((resolve) => setTimeout(resolve, 500));
    await uk.revive();
    for (const uuid of uuids) await delivered(uuid);

    const onUk = texts(uk).slice(before.uk);
    const onRest = texts(rest).slice(before.rest);
    for (const text of burst) {
      const ukCount = onUk.filter((t) => t === text).length;
      const restCount = onRest.filter((t) => t === text).length;
      // On one SMSC only; twice at most on uk, for a submit whose answer the kill cut off
      // (SMPP cannot ask whether it was taken), never on rest.
      expect(ukCount === 0 || restCount === 0, `${text}: uk ${ukCount}, rest ${restCount}`).toBe(
        true,
      );
      expect(restCount, text).toBeLessThanOrEqual(1);
      expect(ukCount + restCount, text).toBeGreaterThanOrEqual(1);
      expect(ukCount, text).toBeLessThanOrEqual(2);
    }
    expect(onRest.length).toBeGreaterThan(0);
    console.log(`burst: ${onUk.length} submits on uk, ${onRest.length} on rest`);
  }, 60_000);
});
