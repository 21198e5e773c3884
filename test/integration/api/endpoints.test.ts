import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ha1, md5Hex } from '../../../src/core/digest.js';
import { startGateway, UUID, type Credentials, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

const PASSWORD = 'Sup3r-Secret-Pw';

/** Digits the next username suffixes take, so that a test can force a clash. */
const suffixes = vi.hoisted(() => ({ queue: [] as string[] }));
vi.mock('../../../src/core/ids.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/core/ids.js')>();
  return {
    ...real,
    randomDigits: (length: number) => suffixes.queue.shift() ?? real.randomDigits(length),
  };
});

describeEachStore('SIP endpoints', (target) => {
  let gw: TestGateway;
  beforeEach(async () => {
    await target.flush();
    gw = await startGateway({ redisUrl: target.redisUrl() });
  });
  afterEach(async () => {
    await gw.close();
  });

  const base = (who: Credentials = gw.main) => `/v1/Account/${who.id}/Endpoint/`;
  const create = (body: Record<string, string>, as: Credentials = gw.main) =>
    gw.request('POST', base(as), { json: body, as });
  const createOk = async (username: string, as: Credentials = gw.main) => {
    const res = await create({ username, password: PASSWORD, alias: `${username}-alias` }, as);
    expect(res.status).toBe(201);
    return res.body as { endpoint_id: string; username: string };
  };
  const count = async (as: Credentials = gw.main) =>
    (await gw.request('GET', base(as), { as })).body.meta.total_count as number;
  const application = async (as: Credentials = gw.main): Promise<string> => {
    const res = await gw.request('POST', `/v1/Account/${as.id}/Application/`, {
      as,
      json: { app_name: 'softphones', answer_url: 'https://example.com/answer' },
    });
    expect(res.status).toBe(201);
    return res.body.app_id;
  };

  it('creates an endpoint whose username gets 12 digits appended', async () => {
    const res = await create({ username: 'alice', password: PASSWORD, alias: 'Alice_desk-1' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([
      'alias',
      'api_id',
      'endpoint_id',
      'message',
      'username',
    ]);
    expect(res.body.username).toMatch(/^alice\d{12}$/);
    expect(res.body).toMatchObject({ alias: 'Alice_desk-1', message: 'created' });
    expect(res.body.endpoint_id).toMatch(/^[1-9]\d{13}$/);
    expect(res.body.api_id).toMatch(UUID);
  });

  it('retrieves every endpoint field, with the password as its MD5', async () => {
    const { endpoint_id, username } = await createOk('bob');
    const res = await gw.request('GET', `${base()}${endpoint_id}/`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      api_id: expect.stringMatching(UUID),
      alias: 'bob-alias',
      application: null,
      endpoint_id,
      password: md5Hex(PASSWORD),
      resource_uri: `/v1/Account/${gw.main.id}/Endpoint/${endpoint_id}/`,
      sip_contact: null,
      sip_expires: null,
      sip_registered: 'false',
      sip_uri: `sip:${username}@127.0.0.1`,
      sip_user_agent: null,
      srtp: 'optional',
      sub_account: null,
      username,
    });
  });

  it('keeps an SRTP policy, and answers 400 naming the field for a bad one', async () => {
    const created = await gw.request('POST', base(), {
      json: { username: 'srtp', password: PASSWORD, alias: 'srtp', srtp: 'required' },
    });
    expect(created.status).toBe(201);
    const path = `${base()}${created.body.endpoint_id}/`;
    expect((await gw.request('GET', path)).body.srtp).toBe('required');
    const bad = await gw.request('POST', path, { json: { srtp: 'mandatory' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/srtp.*required, optional, off or dtls/);
    expect((await gw.request('POST', path, { json: { srtp: 'dtls' } })).status).toBe(200);
    expect((await gw.request('GET', path)).body.srtp).toBe('dtls');
    expect((await gw.request('POST', path, { json: { srtp: 'off' } })).status).toBe(200);
    expect((await gw.request('GET', path)).body.srtp).toBe('off');
    const badCreate = await gw.request('POST', base(), {
      json: { username: 'srtp2', password: PASSWORD, alias: 'srtp2', srtp: 'SDES' },
    });
    expect(badCreate.status).toBe(400);
  });

  it('stores digest HA1 values for MD5 and SHA-256, never the plaintext', async () => {
    const { endpoint_id, username } = await createOk('carol');
    const stored = await gw.gateway.state.endpoints.get(gw.main.id, endpoint_id);
    expect(stored).toMatchObject({
      username,
      password_md5: md5Hex(PASSWORD),
      ha1_md5: ha1('MD5', username, PASSWORD),
      ha1_sha256: ha1('SHA-256', username, PASSWORD),
    });
    expect(JSON.stringify(stored)).not.toContain(PASSWORD);
    const owner = await gw.gateway.state.endpoints.findByUnique({
      space: 'sip_user',
      value: username,
    });
    expect(owner?.endpoint_id).toBe(endpoint_id);
  });

  it('accepts form bodies, paths without the trailing slash, and ignores unknown fields', async () => {
    const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint`, {
      form: { username: 'dave', password: PASSWORD, alias: 'dave', colour: 'blue' },
    });
    expect(res.status).toBe(201);
    const got = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/Endpoint/${res.body.endpoint_id}`,
    );
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('colour');
  });

  it('answers 422 naming a missing parameter and creates nothing', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ password: PASSWORD, alias: 'a' }, 'username'],
      [{ username: 'erin', alias: 'a' }, 'password'],
      [{ username: 'erin', password: PASSWORD }, 'alias'],
    ];
    for (const [body, missing] of cases) {
      const res = await create(body);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        api_id: expect.stringMatching(UUID),
        error: `missing required parameter: ${missing}`,
      });
    }
    const empty = await gw.request('POST', base());
    expect(empty.status).toBe(422);
    expect(await count()).toBe(0);
  });

  it('answers 400 naming the field and its rule, and creates nothing', async () => {
    const username = 'invalid username: must be 1 to 25 letters or digits, starting with a letter';
    const cases: [Record<string, string>, string][] = [
      [{ username: '1abc' }, username],
      [{ username: 'a'.repeat(26) }, username],
      [{ username: 'ab_c' }, username],
      [{ username: '' }, username],
      [{ password: 'abcd' }, 'invalid password: must be from 5 to 128 characters'],
      [{ password: 'p'.repeat(129) }, 'invalid password: must be from 5 to 128 characters'],
      [
        { alias: 'has space' },
        'invalid alias: must be 1 to 100 letters, numbers, hyphens or underscores',
      ],
      [{ alias: '' }, 'invalid alias: must be 1 to 100 letters, numbers, hyphens or underscores'],
      [{ app_id: '12345' }, 'invalid app_id: no application 12345 in this account'],
    ];
    for (const [override, error] of cases) {
      const res = await create({
        username: 'erin',
        password: PASSWORD,
        alias: 'erin',
        ...override,
      });
      expect(res.status, JSON.stringify(override)).toBe(400);
      expect(res.body.error).toBe(error);
    }
    expect(await count()).toBe(0);
    // The limits themselves are accepted.
    expect(
      (await create({ username: 'a'.repeat(25), password: 'p'.repeat(5), alias: 'x' })).status,
    ).toBe(201);
    expect((await create({ username: 'Z', password: PASSWORD, alias: 'x' })).status).toBe(201);
  });

  it('attaches, changes and detaches an application', async () => {
    const appId = await application();
    const res = await create({ username: 'frank', password: PASSWORD, alias: 'f', app_id: appId });
    expect(res.status).toBe(201);
    const path = `${base()}${res.body.endpoint_id}/`;
    expect((await gw.request('GET', path)).body.application).toBe(
      `/v1/Account/${gw.main.id}/Application/${appId}/`,
    );
    const list = await gw.request('GET', base());
    expect(list.body.objects[0].application).toBe(
      `/v1/Account/${gw.main.id}/Application/${appId}/`,
    );
    const detached = await gw.request('POST', path, { form: { app_id: '' } });
    expect(detached.body).toEqual({ api_id: expect.stringMatching(UUID), message: 'changed' });
    expect((await gw.request('GET', path)).body.application).toBeNull();
    const unknown = await gw.request('POST', path, { json: { app_id: '999' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('invalid app_id: no application 999 in this account');
  });

  it('lists newest first with the list item fields, and pages', async () => {
    for (const name of ['u1', 'u2', 'u3']) {
      await createOk(name);
      await new Promise((resolve) => setTimeout(resolve, 2)); // distinct creation times
    }
    const res = await gw.request('GET', base());
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({
      limit: 20,
      offset: 0,
      total_count: 3,
      next: null,
      previous: null,
    });
    expect(res.body.objects.map((o: { alias: string }) => o.alias)).toEqual([
      'u3-alias',
      'u2-alias',
      'u1-alias',
    ]);
    expect(Object.keys(res.body.objects[0]).sort()).toEqual([
      'alias',
      'application',
      'endpoint_id',
      'resource_uri',
      'sip_registered',
      'sip_uri',
      'username',
    ]);
    expect(res.body.objects[0].sip_registered).toBe('false');
    const page = await gw.request('GET', `${base()}?limit=1&offset=1`);
    expect(page.body.objects.map((o: { alias: string }) => o.alias)).toEqual(['u2-alias']);
    expect(page.body.meta.next).toBe(`${base()}?limit=1&offset=2`);
    const over = await gw.request('GET', `${base()}?limit=21`);
    expect(over.status).toBe(400);
    expect(over.body.error).toBe('invalid limit: must be an integer from 1 to 20');
  });

  it('updates the alias and the password, recomputing the digests', async () => {
    const { endpoint_id, username } = await createOk('gina');
    const path = `${base()}${endpoint_id}/`;
    const res = await gw.request('POST', path, {
      json: { alias: 'front-desk', password: 'n3w-pass' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ api_id: expect.stringMatching(UUID), message: 'changed' });
    const got = await gw.request('GET', path);
    expect(got.body).toMatchObject({ alias: 'front-desk', password: md5Hex('n3w-pass'), username });
    const stored = await gw.gateway.state.endpoints.get(gw.main.id, endpoint_id);
    expect(stored?.ha1_md5).toBe(ha1('MD5', username, 'n3w-pass'));
    expect(stored?.ha1_sha256).toBe(ha1('SHA-256', username, 'n3w-pass'));

    const bad = await gw.request('POST', path, { json: { alias: 'ok', password: 'shrt' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid password: must be from 5 to 128 characters');
    expect((await gw.request('GET', path)).body.alias).toBe('front-desk');
    const nothing = await gw.request('POST', path);
    expect(nothing.status).toBe(200);
    const unknown = await gw.request('POST', `${base()}12345678901234/`, { json: { alias: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('endpoint 12345678901234 not found');
  });

  it('draws new digits when the SIP user is already taken, and gives up after five tries', async () => {
    suffixes.queue.push('000000000001', '000000000001', '000000000002');
    expect((await createOk('kim')).username).toBe('kim000000000001');
    expect((await createOk('kim')).username).toBe('kim000000000002');
    suffixes.queue.push(...Array<string>(5).fill('000000000001'));
    const res = await create({ username: 'kim', password: PASSWORD, alias: 'k' });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('sip_user kim000000000001 is already taken');
    expect(suffixes.queue).toEqual([]);
    expect(await count()).toBe(2);
  });

  it('deletes permanently with 204 and frees the SIP user', async () => {
    const { endpoint_id, username } = await createOk('hank');
    const res = await gw.request('DELETE', `${base()}${endpoint_id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await gw.request('GET', `${base()}${endpoint_id}/`)).status).toBe(404);
    expect((await gw.request('DELETE', `${base()}${endpoint_id}/`)).status).toBe(404);
    const owner = await gw.gateway.state.endpoints.findByUnique({
      space: 'sip_user',
      value: username,
    });
    expect(owner).toBeNull();
    expect(await count()).toBe(0);
  });

  it('answers 401 without credentials', async () => {
    const res = await gw.request('GET', base(), { as: null });
    expect(res.status).toBe(401);
    const wrong = await gw.request('POST', base(), {
      as: { id: gw.main.id, token: 'x'.repeat(40) },
      json: { username: 'x', password: PASSWORD, alias: 'x' },
    });
    expect(wrong.status).toBe(401);
    expect(await count()).toBe(0);
  });

  describe('ownership', () => {
    it('keeps subaccounts to their own endpoints; the main account sees all', async () => {
      const sub1 = await gw.subaccount('one');
      const sub2 = await gw.subaccount('two');
      const mine = await createOk('main');
      const first = await createOk('first', sub1);
      await createOk('second', sub2);

      const asSub1 = await gw.request('GET', `${base(sub1)}${first.endpoint_id}/`, { as: sub1 });
      expect(asSub1.body).toMatchObject({
        sub_account: sub1.id,
        resource_uri: `/v1/Account/${sub1.id}/Endpoint/${first.endpoint_id}/`,
      });
      const asMain = await gw.request('GET', `${base()}${first.endpoint_id}/`);
      expect(asMain.body).toMatchObject({
        sub_account: sub1.id,
        resource_uri: `/v1/Account/${gw.main.id}/Endpoint/${first.endpoint_id}/`,
      });

      for (const id of [mine.endpoint_id, first.endpoint_id]) {
        const path = `${base(sub2)}${id}/`;
        expect((await gw.request('GET', path, { as: sub2 })).status).toBe(404);
        expect((await gw.request('POST', path, { as: sub2, json: { alias: 'x' } })).status).toBe(
          404,
        );
        expect((await gw.request('DELETE', path, { as: sub2 })).status).toBe(404);
      }
      const list1 = await gw.request('GET', base(sub1), { as: sub1 });
      expect(list1.body.objects.map((o: { endpoint_id: string }) => o.endpoint_id)).toEqual([
        first.endpoint_id,
      ]);
      expect(list1.body.meta.total_count).toBe(1);
      expect(await count()).toBe(3);
    });

    it('does not let a subaccount attach an application it cannot see', async () => {
      const sub = await gw.subaccount();
      const mainApp = await application();
      const res = await create(
        { username: 'x', password: PASSWORD, alias: 'x', app_id: mainApp },
        sub,
      );
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(`invalid app_id: no application ${mainApp} in this account`);
      const own = await application(sub);
      expect(
        (await create({ username: 'x', password: PASSWORD, alias: 'x', app_id: own }, sub)).status,
      ).toBe(201);
    });

    it.runIf(target.name === 'redis')(
      'hides one tenant from another on the same store',
      async () => {
        const other = await startGateway({
          redisUrl: target.redisUrl(),
          env: { VOXGATE_AUTH_ID: 'MA' + 'B'.repeat(18), VOXGATE_AUTH_TOKEN: 'T'.repeat(40) },
        });
        try {
          const theirs = await createOk('other', other.main);
          const ours = await createOk('ours');
          // Both gateways share the store; each tenant sees only its own endpoints.
          const cross = await gw.request('GET', `${base(other.main)}${ours.endpoint_id}/`, {
            as: other.main,
          });
          expect(cross.status).toBe(404);
          expect((await gw.request('GET', `${base()}${theirs.endpoint_id}/`)).status).toBe(404);
          expect(await count(other.main)).toBe(1);
          expect(await count()).toBe(1);
        } finally {
          await other.close();
        }
      },
    );
  });

  it('never returns or logs the plaintext password', async () => {
    const { endpoint_id } = await createOk('ivan');
    const texts = [
      (await gw.request('GET', `${base()}${endpoint_id}/`)).text,
      (await gw.request('GET', base())).text,
      (await gw.request('POST', `${base()}${endpoint_id}/`, { json: { password: PASSWORD } })).text,
      (await create({ username: '1bad', password: PASSWORD, alias: 'x' })).text,
      (await create({ username: 'good', password: PASSWORD, alias: 'bad alias' })).text,
    ];
    for (const text of texts) expect(text).not.toContain(PASSWORD);
    expect(gw.logs.length).toBeGreaterThan(0);
    expect(gw.logs.join('\n')).not.toContain(PASSWORD);
  });
});
