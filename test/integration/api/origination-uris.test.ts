import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { URI_FORMATS } from '../../../src/sip/origination-uri-format.js';
import { startGateway, UUID, type Credentials, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

const SECRET = 'Trunk-Pa55word!';

describeEachStore('origination URIs', (target) => {
  let gw: TestGateway;
  beforeEach(async () => {
    await target.flush();
    gw = await startGateway({ redisUrl: target.redisUrl() });
  });
  afterEach(async () => {
    await gw.close();
  });

  const base = (who: Credentials = gw.main) => `/v1/Account/${who.id}/SipTrunk/URI/`;
  const create = (body: Record<string, unknown>, as: Credentials = gw.main) =>
    gw.request('POST', base(as), { json: body, as });
  const createOk = async (body: Record<string, unknown>, as: Credentials = gw.main) => {
    const res = await create(body, as);
    expect(res.status, res.text).toBe(201);
    return res.body.uri_uuid as string;
  };
  const count = async (as: Credentials = gw.main) =>
    (await gw.request('GET', base(as), { as })).body.meta.total_count as number;

  it('creates a URI without authentication and retrieves it', async () => {
    const res = await create({ name: 'PBX east', uri: 'pbx.example.com:5080' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      api_id: expect.stringMatching(UUID),
      message: 'Origination URI created successfully.',
      uri_uuid: expect.stringMatching(UUID),
    });
    const got = await gw.request('GET', `${base()}${res.body.uri_uuid}/`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      api_id: expect.stringMatching(UUID),
      uri_uuid: res.body.uri_uuid,
      name: 'PBX east',
      uri: 'pbx.example.com:5080',
      authentication_needed: false,
      username: null,
      resource_uri: `/v1/Account/${gw.main.id}/SipTrunk/URI/${res.body.uri_uuid}/`,
    });
  });

  it('accepts every documented uri format', async () => {
    for (const uri of [
      '203.0.113.10',
      '203.0.113.10:5060',
      'pbx.example.com',
      'pbx.example.com:5080',
      'sip:alice@pbx.example.com',
      'sip:alice@203.0.113.10:5061',
    ]) {
      await createOk({ uri });
    }
    expect(await count()).toBe(6);
  });

  it('keeps the credentials when authentication is needed, and never returns the password', async () => {
    const id = await createOk({
      uri: 'sip:trunk@pbx.example.com',
      authentication_needed: true,
      username: 'voxgate',
      password: SECRET,
    });
    const got = await gw.request('GET', `${base()}${id}/`);
    expect(got.body).toMatchObject({ authentication_needed: true, username: 'voxgate' });
    expect(got.body).not.toHaveProperty('password');
    const stored = await gw.gateway.state.originationUris.get(gw.main.id, id);
    expect(stored?.password).toBe(SECRET);
  });

  it('ignores credentials when authentication is not needed', async () => {
    const id = await createOk({ uri: '203.0.113.10', username: 'u', password: SECRET });
    const stored = await gw.gateway.state.originationUris.get(gw.main.id, id);
    expect(stored).toMatchObject({ authentication_needed: false, username: null, password: null });
  });

  it('takes form bodies, paths without the trailing slash, and ignores unknown fields', async () => {
    const res = await gw.request('POST', `/v1/Account/${gw.main.id}/SipTrunk/URI`, {
      form: {
        uri: '203.0.113.10:5060',
        authentication_needed: 'true',
        username: 'u',
        password: SECRET,
        colour: 'blue',
      },
    });
    expect(res.status).toBe(201);
    const got = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/SipTrunk/URI/${res.body.uri_uuid}`,
    );
    expect(got.body).toMatchObject({ authentication_needed: true, username: 'u', name: null });
    expect(got.body).not.toHaveProperty('colour');
  });

  it('answers 422 for a missing uri, or missing credentials when authentication is on', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'x' }, 'missing required parameter: uri'],
      [
        { uri: '203.0.113.10', authentication_needed: true, password: SECRET },
        'missing required parameter: username (required when authentication_needed is true)',
      ],
      [
        { uri: '203.0.113.10', authentication_needed: true, username: 'u' },
        'missing required parameter: password (required when authentication_needed is true)',
      ],
      [
        { uri: '203.0.113.10', authentication_needed: 'true' },
        'missing required parameter: username (required when authentication_needed is true)',
      ],
    ];
    for (const [body, error] of cases) {
      const res = await create(body);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ api_id: expect.stringMatching(UUID), error });
    }
    expect((await gw.request('POST', base())).status).toBe(422);
    expect(await count()).toBe(0);
  });

  it('answers 400 naming uri and the accepted formats, or the field and its rule', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        { uri: 'https://pbx.example.com' },
        `invalid uri: must be ${URI_FORMATS}; https://pbx.example.com is not <host> or <host>:<port>`,
      ],
      [
        { uri: '203.0.113.10:70000' },
        `invalid uri: must be ${URI_FORMATS}; port 70000 is not from 1 to 65535`,
      ],
      [
        { uri: '300.1.1.1' },
        `invalid uri: must be ${URI_FORMATS}; 300.1.1.1 is not an IPv4 address (four numbers 0-255)`,
      ],
      [
        { uri: 'pbx' },
        `invalid uri: must be ${URI_FORMATS}; pbx is not fully qualified (it needs a domain)`,
      ],
      [
        { uri: 'sip:pbx.example.com' },
        `invalid uri: must be ${URI_FORMATS}; a SIP URI must be sip:<user>@<host>`,
      ],
      [{ uri: '' }, `invalid uri: must be ${URI_FORMATS}`],
      [
        { uri: '203.0.113.10', authentication_needed: 'maybe' },
        'invalid authentication_needed: must be true or false',
      ],
      [
        { uri: '203.0.113.10', name: 'n'.repeat(101) },
        'invalid name: must be at most 100 characters',
      ],
      [
        { uri: '203.0.113.10', authentication_needed: true, username: 'u', password: '' },
        'invalid password: must be from 1 to 128 characters',
      ],
    ];
    for (const [body, error] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe(error);
    }
    expect(await count()).toBe(0);
  });

  it('lists newest first with a limit from 1 to 20', async () => {
    for (let i = 0; i < 3; i++) {
      await createOk({ name: `u${i}`, uri: `10.0.0.${i + 1}` });
      await new Promise((resolve) => setTimeout(resolve, 2)); // distinct creation times
    }
    const res = await gw.request('GET', base());
    expect(res.body.meta).toEqual({
      limit: 20,
      offset: 0,
      total_count: 3,
      next: null,
      previous: null,
    });
    expect(res.body.objects.map((o: { name: string }) => o.name)).toEqual(['u2', 'u1', 'u0']);
    expect(Object.keys(res.body.objects[0]).sort()).toEqual([
      'authentication_needed',
      'name',
      'resource_uri',
      'uri',
      'uri_uuid',
      'username',
    ]);
    const one = await gw.request('GET', `${base()}?limit=1&offset=2`);
    expect(one.body.objects.map((o: { name: string }) => o.name)).toEqual(['u0']);
    expect(one.body.meta.previous).toBe(`${base()}?limit=1&offset=1`);
    for (const limit of ['0', '21', 'ten']) {
      const bad = await gw.request('GET', `${base()}?limit=${limit}`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('invalid limit: must be an integer from 1 to 20');
    }
    expect((await gw.request('GET', `${base()}?limit=20`)).status).toBe(200);
  });

  it('updates, requiring credentials to end up present when authentication is turned on', async () => {
    const id = await createOk({ name: 'a', uri: '203.0.113.10' });
    const path = `${base()}${id}/`;
    const missing = await gw.request('POST', path, {
      json: { authentication_needed: true, username: 'u' },
    });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toBe(
      'missing required parameter: password (required when authentication_needed is true)',
    );
    expect((await gw.request('GET', path)).body.authentication_needed).toBe(false);

    const on = await gw.request('POST', path, {
      form: {
        authentication_needed: 'true',
        username: 'u',
        password: SECRET,
        uri: 'sip:x@pbx.example.com',
      },
    });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({
      api_id: expect.stringMatching(UUID),
      message: 'origination uri updated successfully.',
      uri_uuid: id,
    });
    expect((await gw.request('GET', path)).body).toMatchObject({
      name: 'a',
      uri: 'sip:x@pbx.example.com',
      authentication_needed: true,
      username: 'u',
    });
    // A new username alone keeps the stored password.
    expect((await gw.request('POST', path, { json: { username: 'v' } })).status).toBe(200);
    expect(await gw.gateway.state.originationUris.get(gw.main.id, id)).toMatchObject({
      username: 'v',
      password: SECRET,
    });

    const off = await gw.request('POST', path, { json: { authentication_needed: false } });
    expect(off.status).toBe(200);
    expect((await gw.request('GET', path)).body).toMatchObject({
      authentication_needed: false,
      username: null,
    });
    expect(await gw.gateway.state.originationUris.get(gw.main.id, id)).toMatchObject({
      username: null,
      password: null,
    });

    const bad = await gw.request('POST', path, { json: { uri: 'not a uri', name: 'b' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^invalid uri: must be /);
    expect((await gw.request('GET', path)).body.name).toBe('a');
    expect(
      (await gw.request('POST', `${base()}00000000-0000-4000-8000-000000000000/`, { json: {} }))
        .status,
    ).toBe(404);
  });

  it('deletes with 204, also a URI a trunk routes to (its calls then skip it)', async () => {
    const primary = await createOk({ uri: 'pbx.example.com' });
    const fallback = await createOk({ uri: 'backup.example.com' });
    const trunk = await gw.request('POST', `/v1/Account/${gw.main.id}/SipTrunk/Trunk/`, {
      json: {
        name: 't',
        trunk_direction: 'inbound',
        primary_uri_uuid: primary,
        fallback_uri_uuid: fallback,
      },
    });
    expect(trunk.status).toBe(201);
    expect(await count()).toBe(2);
    const res = await gw.request('DELETE', `${base()}${primary}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await gw.request('GET', `${base()}${primary}/`)).status).toBe(404);
    expect((await gw.request('DELETE', `${base()}${primary}/`)).status).toBe(404);
    expect(await count()).toBe(1);
    // The trunk still names it; its calls skip it (tested with calls in trunk-calls.test.ts).
    const kept = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/SipTrunk/Trunk/${trunk.body.trunk_id}/`,
    );
    expect(kept.body.primary_uri_uuid).toBe(primary);
  });

  it('answers 401 without valid credentials', async () => {
    expect((await gw.request('GET', base(), { as: null })).status).toBe(401);
    const res = await gw.request('POST', base(), {
      as: { id: gw.main.id, token: 'y'.repeat(40) },
      json: { uri: '203.0.113.10' },
    });
    expect(res.status).toBe(401);
    expect(await count()).toBe(0);
  });

  describe('ownership', () => {
    it('keeps subaccounts to their own URIs; the main account sees all', async () => {
      const sub1 = await gw.subaccount('one');
      const sub2 = await gw.subaccount('two');
      const mine = await createOk({ uri: '203.0.113.1' });
      const first = await createOk({ uri: '203.0.113.2' }, sub1);
      await createOk({ uri: '203.0.113.3' }, sub2);
      for (const id of [mine, first]) {
        const path = `${base(sub2)}${id}/`;
        expect((await gw.request('GET', path, { as: sub2 })).status).toBe(404);
        expect((await gw.request('POST', path, { as: sub2, json: { name: 'x' } })).status).toBe(
          404,
        );
        expect((await gw.request('DELETE', path, { as: sub2 })).status).toBe(404);
      }
      const list = await gw.request('GET', base(sub1), { as: sub1 });
      expect(list.body.objects.map((o: { uri_uuid: string }) => o.uri_uuid)).toEqual([first]);
      expect(list.body.objects[0].resource_uri).toBe(
        `/v1/Account/${sub1.id}/SipTrunk/URI/${first}/`,
      );
      expect(await count()).toBe(3);
      expect((await gw.request('GET', `${base()}${first}/`)).status).toBe(200);
    });

    it.runIf(target.name === 'redis')(
      'hides one tenant from another on the same store',
      async () => {
        const other = await startGateway({
          redisUrl: target.redisUrl(),
          env: { VOXGATE_AUTH_ID: 'MA' + 'C'.repeat(18), VOXGATE_AUTH_TOKEN: 'U'.repeat(40) },
        });
        try {
          const theirs = await createOk({ uri: '203.0.113.9' }, other.main);
          const ours = await createOk({ uri: '203.0.113.8' });
          expect(
            (await gw.request('GET', `${base(other.main)}${ours}/`, { as: other.main })).status,
          ).toBe(404);
          expect((await gw.request('GET', `${base()}${theirs}/`)).status).toBe(404);
          expect(await count(other.main)).toBe(1);
          expect(await count()).toBe(1);
        } finally {
          await other.close();
        }
      },
    );
  });

  it('never returns or logs the password', async () => {
    const id = await createOk({
      uri: '203.0.113.10',
      authentication_needed: true,
      username: 'u',
      password: SECRET,
    });
    const texts = [
      (await gw.request('GET', `${base()}${id}/`)).text,
      (await gw.request('GET', base())).text,
      (await gw.request('POST', `${base()}${id}/`, { json: { password: SECRET } })).text,
      (
        await create({
          uri: 'bad uri',
          authentication_needed: true,
          username: 'u',
          password: SECRET,
        })
      ).text,
      (await create({ uri: '203.0.113.10', authentication_needed: true, password: SECRET })).text,
    ];
    for (const text of texts) expect(text).not.toContain(SECRET);
    expect(gw.logs.length).toBeGreaterThan(0);
    expect(gw.logs.join('\n')).not.toContain(SECRET);
  });
});
