import { afterEach, beforeEach, expect, it } from 'vitest';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

describeEachStore('accounts and subaccounts', (target) => {
  let gw: TestGateway;
  beforeEach(async () => {
    await target.flush();
    gw = await startGateway({ redisUrl: target.redisUrl() });
  });
  afterEach(async () => {
    await gw.close();
  });

  it('generates a main account with the documented id and token shapes', async () => {
    expect(gw.main.id).toMatch(/^MA[A-Z0-9]{18}$/);
    expect(gw.main.token).toMatch(/^[A-Za-z0-9]{40}$/);
    const res = await gw.request('GET', `/v1/Account/${gw.main.id}/`);
    expect(res.status).toBe(200);
    expect(res.body.api_id).toMatch(UUID);
    expect(res.body.auth_id).toBe(gw.main.id);
    expect(res.body.resource_uri).toBe(`/v1/Account/${gw.main.id}/`);
    expect(res.body).not.toHaveProperty('auth_token');
  });

  it('answers 401 with the error envelope for missing, wrong or mismatched credentials', async () => {
    const path = `/v1/Account/${gw.main.id}/Subaccount/`;
    const missing = await gw.request('GET', path, { as: null });
    expect(missing.status).toBe(401);
    expect(missing.body.api_id).toMatch(UUID);
    expect(missing.body.error).toMatch(/authentication required/);

    const wrong = await gw.request('GET', path, { as: { id: gw.main.id, token: 'x'.repeat(40) } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatch(/wrong auth id or auth token/);

    const unknown = await gw.request('GET', path, {
      as: { id: 'MA000000000000000000', token: gw.main.token },
    });
    expect(unknown.status).toBe(401);

    const sub = await gw.subaccount();
    const mismatch = await gw.request('GET', path, { as: sub });
    expect(mismatch.status).toBe(401);
    expect(mismatch.body.error).toContain(gw.main.id);
  });

  it('refuses a wrong token right after the right one was accepted (within the lookup cache)', async () => {
    const path = `/v1/Account/${gw.main.id}/`;
    const token = gw.main.token;
    expect((await gw.request('GET', path)).status).toBe(200);
    const altered = token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a');
    for (const wrong of [altered, token.slice(0, -1), `${token}a`, '']) {
      const res = await gw.request('GET', path, { as: { id: gw.main.id, token: wrong } });
      expect(res.status).toBe(401);
    }
    expect((await gw.request('GET', path)).status).toBe(200);
  });

  it('creates, reads, lists, updates and deletes subaccounts', async () => {
    const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Subaccount/`, {
      form: { name: 'Support desk', enabled: 'true' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ message: 'created' });
    expect(created.body.auth_id).toMatch(/^SA[A-Z0-9]{18}$/);
    expect(created.body.auth_token).toMatch(/^[A-Za-z0-9]{40}$/);
    const id = created.body.auth_id as string;

    const got = await gw.request('GET', `/v1/Account/${gw.main.id}/Subaccount/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      auth_id: id,
      name: 'Support desk',
      enabled: true,
      account: `/v1/Account/${gw.main.id}/`,
      resource_uri: `/v1/Account/${gw.main.id}/Subaccount/${id}/`,
    });

    const changed = await gw.request('POST', `/v1/Account/${gw.main.id}/Subaccount/${id}/`, {
      json: { name: 'Desk' },
    });
    expect(changed.body).toMatchObject({ message: 'changed' });
    const list = await gw.request('GET', `/v1/Account/${gw.main.id}/Subaccount/`);
    expect(list.body.meta).toEqual({
      limit: 20,
      offset: 0,
      total_count: 1,
      next: null,
      previous: null,
    });
    expect(list.body.objects.map((o: { name: string }) => o.name)).toEqual(['Desk']);

    const deleted = await gw.request('DELETE', `/v1/Account/${gw.main.id}/Subaccount/${id}/`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await gw.request('GET', `/v1/Account/${gw.main.id}/Subaccount/${id}/`)).status).toBe(
      404,
    );
  });

  it('lets a subaccount in with its own credentials, and not once disabled or deleted', async () => {
    const sub = await gw.subaccount('team');
    const own = await gw.request('GET', `/v1/Account/${sub.id}/`, { as: sub });
    expect(own.status).toBe(200);
    expect(own.body.account_type).toBe('subaccount');

    await gw.request('POST', `/v1/Account/${gw.main.id}/Subaccount/${sub.id}/`, {
      json: { enabled: false },
    });
    const disabled = await gw.request('GET', `/v1/Account/${sub.id}/`, { as: sub });
    expect(disabled.status).toBe(401);
    expect(disabled.body.error).toMatch(/disabled/);

    await gw.request('DELETE', `/v1/Account/${gw.main.id}/Subaccount/${sub.id}/`);
    expect((await gw.request('GET', `/v1/Account/${sub.id}/`, { as: sub })).status).toBe(401);
  });

  it('does not let a subaccount manage subaccounts', async () => {
    const sub = await gw.subaccount();
    const res = await gw.request('POST', `/v1/Account/${sub.id}/Subaccount/`, {
      as: sub,
      json: { name: 'x' },
    });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/only the main account/);
  });

  it('validates subaccount input: 422 for a missing name, 400 naming the rule otherwise', async () => {
    const missing = await gw.request('POST', `/v1/Account/${gw.main.id}/Subaccount/`, { json: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toBe('missing required parameter: name');
    const bad = await gw.request('POST', `/v1/Account/${gw.main.id}/Subaccount/`, {
      json: { name: 'n', enabled: 'maybe' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid enabled: must be true or false');
    const list = await gw.request('GET', `/v1/Account/${gw.main.id}/Subaccount/`);
    expect(list.body.meta.total_count).toBe(0);
  });

  it('pages the list with next and previous links, and refuses a limit above 20', async () => {
    for (let i = 0; i < 5; i++) await gw.subaccount(`s${i}`);
    const first = await gw.request('GET', `/v1/Account/${gw.main.id}/Subaccount/?limit=2`);
    expect(first.body.meta).toEqual({
      limit: 2,
      offset: 0,
      total_count: 5,
      next: `/v1/Account/${gw.main.id}/Subaccount/?limit=2&offset=2`,
      previous: null,
    });
    const last = await gw.request('GET', `/v1/Account/${gw.main.id}/Subaccount/?limit=2&offset=4`);
    expect(last.body.objects).toHaveLength(1);
    expect(last.body.meta.next).toBeNull();
    expect(last.body.meta.previous).toBe(`/v1/Account/${gw.main.id}/Subaccount/?limit=2&offset=2`);
    const over = await gw.request('GET', `/v1/Account/${gw.main.id}/Subaccount/?limit=21`);
    expect(over.status).toBe(400);
    expect(over.body.error).toBe('invalid limit: must be an integer from 1 to 20');
  });

  it('answers 405 with Allow for a wrong method and 404 for an unknown path', async () => {
    const res = await gw.request('PUT', `/v1/Account/${gw.main.id}/Subaccount/`);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, POST');
    expect(res.body.api_id).toMatch(UUID);
    const unknown = await gw.request('GET', `/v1/Account/${gw.main.id}/Nothing/`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/no resource/);
  });

  it('never writes credentials to the request log', async () => {
    const sub = await gw.subaccount();
    await gw.request('GET', `/v1/Account/${sub.id}/`, { as: sub });
    await gw.request('GET', `/v1/Account/${gw.main.id}/`, {
      as: { id: gw.main.id, token: 'wrongwrongwrong' },
    });
    const all = gw.logs.join('\n');
    expect(gw.logs.length).toBeGreaterThan(0);
    expect(all).not.toContain(gw.main.token);
    expect(all).not.toContain(sub.token);
    expect(all).not.toContain('wrongwrongwrong');
    expect(all).not.toContain(Buffer.from(`${sub.id}:${sub.token}`).toString('base64'));
  });
});
