import { afterEach, beforeEach, expect, it } from 'vitest';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

const US1 = '14155550100';
const US2 = '14155550101';
const UK = '447400123400';

describeEachStore('powerpacks', (target) => {
  let gw: TestGateway;
  let base: string;
  beforeEach(async () => {
    await target.flush();
    gw = await startGateway({ redisUrl: target.redisUrl() });
    base = `/v1/Account/${gw.main.id}`;
    await gw.request('POST', `${base}/Number/`, {
      json: { numbers: `${US1},${US2},${UK}`, carrier: 'c', region: 'r' },
    });
  });
  afterEach(async () => {
    await gw.close();
  });

  const create = (json: Record<string, unknown>) =>
    gw.request('POST', `${base}/Powerpack/`, { json });

  it('creates, gets, lists, updates and deletes a powerpack', async () => {
    const res = await create({ name: 'alerts' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ message: 'created', name: 'alerts' });
    expect(res.body.uuid).toMatch(UUID);
    const uuid = res.body.uuid;
    const got = await gw.request('GET', `${base}/Powerpack/${uuid}/`);
    expect(got.body).toMatchObject({
      uuid,
      name: 'alerts',
      sticky_sender: true,
      local_connect: true,
      application_id: null,
      number_pool: `${base}/Powerpack/${uuid}/Number/`,
      resource_uri: `${base}/Powerpack/${uuid}/`,
    });
    const changed = await gw.request('POST', `${base}/Powerpack/${uuid}/`, {
      json: { name: 'alerts-2', sticky_sender: false },
    });
    expect(changed.body.message).toBe('changed');
    const list = await gw.request('GET', `${base}/Powerpack/`);
    expect(list.body.meta.total_count).toBe(1);
    expect(list.body.objects[0]).toMatchObject({ name: 'alerts-2', sticky_sender: false });
    expect((await gw.request('DELETE', `${base}/Powerpack/${uuid}/`)).status).toBe(204);
    expect((await gw.request('GET', `${base}/Powerpack/${uuid}/`)).status).toBe(404);
  });

  it('refuses bad input with specific errors and changes nothing', async () => {
    expect((await create({})).body.error).toBe('missing required parameter: name');
    expect((await create({ name: 'x', application_id: 'nope' })).body.error).toBe(
      'invalid app_id: no application nope in this account',
    );
    await create({ name: 'taken' });
    const twice = await create({ name: 'taken' });
    expect(twice.status).toBe(409);
    expect(twice.body.error).toBe('a powerpack named taken already exists');
    expect((await gw.request('GET', `${base}/Powerpack/`)).body.meta.total_count).toBe(1);
  });

  it('keeps a pool of the account’s numbers, each in one powerpack', async () => {
    const a = (await create({ name: 'a' })).body.uuid;
    const b = (await create({ name: 'b' })).body.uuid;
    const add = (uuid: string, number: string) =>
      gw.request('POST', `${base}/Powerpack/${uuid}/Number/${number}/`);
    expect((await add(a, `+${US1}`)).body).toMatchObject({ number: US1, country_iso2: 'US' });
    expect((await add(a, US1)).status).toBe(200);
    const elsewhere = await add(b, US1);
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.error).toBe(`number ${US1} is already in powerpack ${a}`);
    const foreign = await add(a, '14155550199');
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('number 14155550199 is not a number of this account');
    await add(a, UK);
    const pool = await gw.request('GET', `${base}/Powerpack/${a}/Number/`);
    expect(pool.body.objects.map((n: { number: string }) => n.number)).toEqual([US1, UK]);
    expect((await gw.request('DELETE', `${base}/Powerpack/${a}/Number/${UK}/`)).status).toBe(204);
    expect((await gw.request('DELETE', `${base}/Powerpack/${a}/Number/${UK}/`)).status).toBe(404);
  });

  it('sends from a number of the pool, in the destination’s country, the same every time', async () => {
    const uuid = (await create({ name: 'senders' })).body.uuid;
    for (const n of [US1, US2, UK])
      await gw.request('POST', `${base}/Powerpack/${uuid}/Number/${n}/`);
    const from = async (dst: string) => {
      const res = await gw.request('POST', `${base}/Message/`, {
        json: { powerpack_uuid: uuid, dst, text: 'x' },
      });
      expect(res.status).toBe(202);
      const record = await gw.request('GET', `${base}/Message/${res.body.message_uuid[0]}/`);
      expect(record.body.powerpack_id).toBe(uuid);
      return record.body.from_number as string;
    };
    expect(await from('447400123456')).toBe(UK);
    const first = await from('14155550111');
    expect([US1, US2]).toContain(first);
    for (let k = 0; k < 3; k++) expect(await from('14155550111')).toBe(first);
    const sub = await gw.subaccount();
    const hidden = await gw.request('GET', `/v1/Account/${sub.id}/Powerpack/${uuid}/`, { as: sub });
    expect(hidden.status).toBe(404);
  });
});
