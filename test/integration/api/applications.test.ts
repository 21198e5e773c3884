import { afterEach, beforeEach, expect, it } from 'vitest';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

describeEachStore('applications', (target) => {
  let gw: TestGateway;
  let base: string;
  beforeEach(async () => {
    await target.flush();
    gw = await startGateway({ redisUrl: target.redisUrl() });
    base = `/v1/Account/${gw.main.id}/Application`;
  });
  afterEach(async () => {
    await gw.close();
  });

  const create = (body: Record<string, unknown>, as = gw.main, account = gw.main.id) =>
    gw.request('POST', `/v1/Account/${account}/Application/`, { json: body, as });

  it('creates an application and answers with the documented body', async () => {
    const res = await create({
      app_name: 'Sales IVR',
      answer_url: 'https://example.com/answer',
      unknown_field: 1,
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['api_id', 'app_id', 'message']);
    expect(res.body.message).toBe('created');
    expect(res.body.api_id).toMatch(UUID);

    const got = await gw.request('GET', `${base}/${res.body.app_id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      app_id: res.body.app_id,
      app_name: 'Sales IVR',
      answer_url: 'https://example.com/answer',
      answer_method: 'POST',
      hangup_url: 'https://example.com/answer',
      hangup_method: 'POST',
      fallback_answer_url: '',
      message_url: '',
      default_number_app: false,
      default_endpoint_app: false,
      sub_account: null,
      resource_uri: `${base}/${res.body.app_id}/`,
    });
    expect(got.body).not.toHaveProperty('unknown_field');
  });

  it('accepts form-encoded bodies with every setting', async () => {
    const res = await gw.request('POST', `${base}/`, {
      form: {
        app_name: 'forms',
        answer_url: 'http://127.0.0.1:9000/a',
        answer_method: 'GET',
        hangup_url: 'http://127.0.0.1:9000/h',
        hangup_method: 'GET',
        fallback_answer_url: 'http://127.0.0.1:9000/f',
        fallback_method: 'GET',
        message_url: 'http://127.0.0.1:9000/m',
        message_method: 'GET',
        default_number_app: 'true',
        default_endpoint_app: 'false',
      },
    });
    expect(res.status).toBe(201);
    const got = await gw.request('GET', `${base}/${res.body.app_id}/`);
    expect(got.body).toMatchObject({
      answer_method: 'GET',
      hangup_url: 'http://127.0.0.1:9000/h',
      fallback_answer_url: 'http://127.0.0.1:9000/f',
      message_url: 'http://127.0.0.1:9000/m',
      message_method: 'GET',
      default_number_app: true,
      default_app: true,
    });
  });

  it('rejects bad input with a message naming the field and the rule, creating nothing', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ answer_url: 'https://e.com/a' }, 422, 'missing required parameter: app_name'],
      [{ app_name: 'x' }, 422, 'missing required parameter: answer_url'],
      [
        { app_name: 'x', answer_url: 'ftp://e.com/a' },
        400,
        'invalid answer_url: must be an http or https URL',
      ],
      [
        { app_name: 'x', answer_url: 'https://e.com/a', answer_method: 'PUT' },
        400,
        'invalid answer_method: must be GET or POST',
      ],
      [
        { app_name: '$$$', answer_url: 'https://e.com/a' },
        400,
        'invalid app_name: must be 1 to 100 letters, digits, spaces, dots, hyphens or underscores, starting with a letter or digit',
      ],
      [
        { app_name: 'x', answer_url: 'https://e.com/a', subaccount: 'SA000000000000000000' },
        400,
        'invalid subaccount: SA000000000000000000 is not a subaccount of this account',
      ],
    ];
    for (const [body, status, message] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error).toBe(message);
    }
    expect((await gw.request('GET', `${base}/`)).body.meta.total_count).toBe(0);
  });

  it('updates settings and keeps one default number app per account', async () => {
    const a = (
      await create({ app_name: 'a', answer_url: 'https://e.com/a', default_number_app: true })
    ).body.app_id;
    const b = (await create({ app_name: 'b', answer_url: 'https://e.com/b' })).body.app_id;
    const changed = await gw.request('POST', `${base}/${b}/`, {
      json: { default_number_app: true, answer_url: 'https://e.com/b2' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.message).toBe('changed');
    expect((await gw.request('GET', `${base}/${a}/`)).body.default_number_app).toBe(false);
    const bGot = (await gw.request('GET', `${base}/${b}/`)).body;
    expect(bGot.default_number_app).toBe(true);
    expect(bGot.answer_url).toBe('https://e.com/b2');
    const bad = await gw.request('POST', `${base}/${b}/`, { json: { hangup_method: 'DELETE' } });
    expect(bad.status).toBe(400);
    expect((await gw.request('GET', `${base}/${b}/`)).body.hangup_method).toBe('POST');
  });

  it('lists with the envelope, newest first, and filters by name', async () => {
    // Records made in one millisecond tie on time; this gateway's clock ticks on every reading.
    await gw.close();
    let now = Date.now();
    gw = await startGateway({ redisUrl: target.redisUrl(), clock: { now: () => ++now } });
    base = `/v1/Account/${gw.main.id}/Application`;
    for (const name of ['alpha', 'beta', 'alphabet'])
      await create({ app_name: name, answer_url: 'https://e.com/a' });
    const all = await gw.request('GET', `${base}/`);
    expect(all.body.meta.total_count).toBe(3);
    expect(all.body.objects.map((o: { app_name: string }) => o.app_name)).toEqual([
      'alphabet',
      'beta',
      'alpha',
    ]);
    const some = await gw.request('GET', `${base}/?app_name=alpha&limit=1`);
    expect(some.body.meta).toMatchObject({
      total_count: 2,
      limit: 1,
      next: `${base}/?app_name=alpha&limit=1&offset=1`,
    });
  });

  it('deletes with 204 and detaches numbers that pointed at it', async () => {
    const id = (await create({ app_name: 'gone', answer_url: 'https://e.com/a' })).body.app_id;
    await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
      json: { numbers: '14155550100', carrier: 'own', region: 'US', app_id: id },
    });
    expect((await gw.request('DELETE', `${base}/${id}/`)).status).toBe(204);
    expect((await gw.request('GET', `${base}/${id}/`)).status).toBe(404);
    expect((await gw.request('DELETE', `${base}/${id}/`)).status).toBe(404);
    const number = await gw.request('GET', `/v1/Account/${gw.main.id}/Number/14155550100/`);
    expect(number.body.app_id).toBeNull();
    expect(number.body.application).toBeNull();
  });

  it('keeps accounts apart: a subaccount sees its own, 404 for the others', async () => {
    const sub1 = await gw.subaccount('one');
    const sub2 = await gw.subaccount('two');
    const mainApp = (await create({ app_name: 'main', answer_url: 'https://e.com/a' })).body.app_id;
    const sub1App = (
      await create({ app_name: 'one', answer_url: 'https://e.com/a' }, sub1, sub1.id)
    ).body.app_id;
    const assigned = (
      await create({ app_name: 'to2', answer_url: 'https://e.com/a', subaccount: sub2.id })
    ).body.app_id;

    expect(
      (await gw.request('GET', `/v1/Account/${sub1.id}/Application/${mainApp}/`, { as: sub1 }))
        .status,
    ).toBe(404);
    expect(
      (await gw.request('GET', `/v1/Account/${sub2.id}/Application/${sub1App}/`, { as: sub2 }))
        .status,
    ).toBe(404);
    expect(
      (await gw.request('DELETE', `/v1/Account/${sub2.id}/Application/${sub1App}/`, { as: sub2 }))
        .status,
    ).toBe(404);
    expect(
      (
        await gw.request('POST', `/v1/Account/${sub2.id}/Application/${sub1App}/`, {
          as: sub2,
          json: { app_name: 'x' },
        })
      ).status,
    ).toBe(404);

    const own = await gw.request('GET', `/v1/Account/${sub1.id}/Application/${sub1App}/`, {
      as: sub1,
    });
    expect(own.body.sub_account).toBe(sub1.id);
    expect(own.body.resource_uri).toBe(`/v1/Account/${sub1.id}/Application/${sub1App}/`);
    const list2 = await gw.request('GET', `/v1/Account/${sub2.id}/Application/`, { as: sub2 });
    expect(list2.body.objects.map((o: { app_id: string }) => o.app_id)).toEqual([assigned]);
    const mainList = await gw.request('GET', `${base}/`);
    expect(mainList.body.meta.total_count).toBe(3);
    const filtered = await gw.request('GET', `${base}/?subaccount=${sub1.id}`);
    expect(filtered.body.objects.map((o: { app_id: string }) => o.app_id)).toEqual([sub1App]);
  });
});
