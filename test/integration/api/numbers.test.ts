import { afterEach, beforeEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

describeEachStore('numbers', (target) => {
  let gw: TestGateway;
  let base: string;
  beforeEach(async () => {
    await target.flush();
    gw = await startGateway({ redisUrl: target.redisUrl() });
    base = `/v1/Account/${gw.main.id}/Number`;
  });
  afterEach(async () => {
    await gw.close();
  });

  const add = (body: Record<string, unknown>) => gw.request('POST', `${base}/`, { json: body });

  it('adds several numbers at once and shows each with its country', async () => {
    const res = await add({
      numbers: '+14155550100, 442071838750',
      carrier: 'Own SIP',
      region: 'West',
      number_type: 'local',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      message: 'created',
      numbers: ['14155550100', '442071838750'],
    });
    const us = await gw.request('GET', `${base}/14155550100/`);
    expect(us.body).toMatchObject({
      number: '14155550100',
      country: 'US',
      carrier: 'Own SIP',
      region: 'West',
      number_type: 'local',
      alias: null,
      application: null,
      sub_account: null,
      voice_enabled: true,
      resource_uri: `${base}/14155550100/`,
    });
    expect(us.body.added_on).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // A leading plus finds the same number.
    expect((await gw.request('GET', `${base}/%2B442071838750/`)).body.country).toBe('GB');
  });

  it('adds nothing when one number of the batch is bad', async () => {
    const bad = await add({ numbers: '14155550100,12345', carrier: 'c', region: 'r' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid numbers: 12345 is not a valid E.164 number');
    expect((await gw.request('GET', `${base}/`)).body.meta.total_count).toBe(0);

    const missing = await add({ numbers: '14155550100', region: 'r' });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toBe('missing required parameter: carrier');
    const type = await add({
      numbers: '14155550100',
      carrier: 'c',
      region: 'r',
      number_type: 'premium',
    });
    expect(type.status).toBe(400);
    expect(type.body.error).toBe(
      'invalid number_type: must be one of local, national, mobile, tollfree, fixed',
    );
    const app = await add({ numbers: '14155550100', carrier: 'c', region: 'r', app_id: '999' });
    expect(app.status).toBe(400);
    expect(app.body.error).toBe('invalid app_id: no application 999 in this account');
    expect((await gw.request('GET', `${base}/`)).body.meta.total_count).toBe(0);
  });

  it('refuses a number another account holds, rolling back the whole batch', async () => {
    await add({ numbers: '14155550100', carrier: 'c', region: 'r' });
    const res = await add({ numbers: '14155550111,14155550100', carrier: 'c', region: 'r' });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('number 14155550100 is already in use');
    expect((await gw.request('GET', `${base}/14155550111/`)).status).toBe(404);
  });

  it('filters the list by type, prefix, alias and subaccount', async () => {
    const sub = await gw.subaccount();
    await add({ numbers: '14155550100,14155550111', carrier: 'c', region: 'r' });
    await add({
      numbers: '18005550199',
      carrier: 'c',
      region: 'r',
      number_type: 'tollfree',
      subaccount: sub.id,
    });
    await gw.request('POST', `${base}/14155550111/`, { json: { alias: 'front desk' } });
    const pick = async (query: string) =>
      (await gw.request('GET', `${base}/?${query}`)).body.objects.map(
        (o: { number: string }) => o.number,
      );
    expect(await pick('number_type=tollfree')).toEqual(['18005550199']);
    expect((await pick('number_startswith=%2B1415')).sort()).toEqual([
      '14155550100',
      '14155550111',
    ]);
    expect(await pick('alias=front%20desk')).toEqual(['14155550111']);
    expect(await pick(`subaccount=${sub.id}`)).toEqual(['18005550199']);
    const bad = await gw.request('GET', `${base}/?number_startswith=abc`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid number_startswith: must be up to 15 digits');
  });

  it('updates the application, alias and subaccount, and deletes', async () => {
    const sub = await gw.subaccount();
    await add({ numbers: '14155550100', carrier: 'c', region: 'r' });
    const appId = (
      await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
        json: { app_name: 'a', answer_url: 'https://e.com/a' },
      })
    ).body.app_id;
    const changed = await gw.request('POST', `${base}/14155550100/`, {
      form: { app_id: appId, alias: 'main line', subaccount: sub.id },
    });
    expect(changed.body.message).toBe('changed');
    const got = (await gw.request('GET', `${base}/14155550100/`)).body;
    expect(got).toMatchObject({
      app_id: appId,
      alias: 'main line',
      sub_account: sub.id,
      application: `/v1/Account/${gw.main.id}/Application/${appId}/`,
    });
    // The subaccount now sees it.
    expect(
      (await gw.request('GET', `/v1/Account/${sub.id}/Number/14155550100/`, { as: sub })).status,
    ).toBe(200);
    await gw.request('POST', `${base}/14155550100/`, { json: { app_id: '' } });
    expect((await gw.request('GET', `${base}/14155550100/`)).body.app_id).toBeNull();
    expect((await gw.request('DELETE', `${base}/14155550100/`)).status).toBe(204);
    expect((await gw.request('GET', `${base}/14155550100/`)).status).toBe(404);
    // Once deleted, the number can be added again.
    expect((await add({ numbers: '14155550100', carrier: 'c', region: 'r' })).status).toBe(201);
  });

  it("attaches a number to an inbound trunk of the number's owner, and detaches it", async () => {
    const trunk = async (as = gw.main) => {
      const account = `/v1/Account/${as.id}/SipTrunk`;
      const uri = await gw.request('POST', `${account}/URI/`, {
        json: { uri: 'pbx.example.com' },
        as,
      });
      const created = await gw.request('POST', `${account}/Trunk/`, {
        json: { trunk_direction: 'inbound', primary_uri_uuid: uri.body.uri_uuid },
        as,
      });
      return created.body.trunk_id as string;
    };
    const mine = await trunk();
    const added = await add({ numbers: '14155550100', carrier: 'c', region: 'r', trunk_id: mine });
    expect(added.status).toBe(201);
    expect((await gw.request('GET', `${base}/14155550100/`)).body.trunk_id).toBe(mine);

    const unknown = await gw.request('POST', `${base}/14155550100/`, {
      json: { trunk_id: 'no-such-trunk' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe(
      'invalid trunk_id: no inbound trunk no-such-trunk in this account',
    );
    // A subaccount's trunk cannot carry the main account's number, nor the number move to
    // the subaccount while the main account's trunk carries it.
    const sub = await gw.subaccount();
    const theirs = await trunk(sub);
    const crossed = await gw.request('POST', `${base}/14155550100/`, {
      json: { trunk_id: theirs },
    });
    expect(crossed.status).toBe(400);
    expect(crossed.body.error).toBe(
      `invalid trunk_id: trunk ${theirs} belongs to ${sub.id}, the number to the main account`,
    );
    const moved = await gw.request('POST', `${base}/14155550100/`, {
      json: { subaccount: sub.id },
    });
    expect(moved.status).toBe(400);
    expect((await gw.request('GET', `${base}/14155550100/`)).body).toMatchObject({
      trunk_id: mine,
      sub_account: null,
    });
    const both = await gw.request('POST', `${base}/14155550100/`, {
      json: { subaccount: sub.id, trunk_id: theirs },
    });
    expect(both.status).toBe(200);

    await gw.request('POST', `${base}/14155550100/`, { json: { trunk_id: '' } });
    expect((await gw.request('GET', `${base}/14155550100/`)).body.trunk_id).toBeNull();
  });

  it('keeps subaccounts apart', async () => {
    const one = await gw.subaccount('one');
    const two = await gw.subaccount('two');
    await add({ numbers: '14155550100', carrier: 'c', region: 'r', subaccount: one.id });
    expect(
      (await gw.request('GET', `/v1/Account/${two.id}/Number/14155550100/`, { as: two })).status,
    ).toBe(404);
    expect(
      (await gw.request('DELETE', `/v1/Account/${two.id}/Number/14155550100/`, { as: two })).status,
    ).toBe(404);
    expect(
      (await gw.request('GET', `/v1/Account/${two.id}/Number/`, { as: two })).body.meta.total_count,
    ).toBe(0);
    expect(
      (await gw.request('GET', `/v1/Account/${one.id}/Number/`, { as: one })).body.meta.total_count,
    ).toBe(1);
    const grab = await gw.request('POST', `/v1/Account/${two.id}/Number/`, {
      as: two,
      json: { numbers: '14155550111', carrier: 'c', region: 'r', subaccount: one.id },
    });
    expect(grab.status).toBe(400);
  });
});
