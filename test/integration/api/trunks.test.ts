import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, UUID, type Credentials, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

describeEachStore('inbound trunks', (target) => {
  let gw: TestGateway;
  beforeEach(async () => {
    await target.flush();
    gw = await startGateway({ redisUrl: target.redisUrl() });
  });
  afterEach(async () => {
    await gw.close();
  });

  const base = (who: Credentials = gw.main) => `/v1/Account/${who.id}/SipTrunk/Trunk/`;
  const uriBase = (who: Credentials = gw.main) => `/v1/Account/${who.id}/SipTrunk/URI/`;
  const newUri = async (as: Credentials = gw.main, uri = 'pbx.example.com') => {
    const res = await gw.request('POST', uriBase(as), { as, json: { uri } });
    expect(res.status).toBe(201);
    return res.body.uri_uuid as string;
  };
  const create = (body: Record<string, unknown>, as: Credentials = gw.main) =>
    gw.request('POST', base(as), { json: body, as });
  const createOk = async (body: Record<string, unknown>, as: Credentials = gw.main) => {
    const res = await create({ trunk_direction: 'inbound', ...body }, as);
    expect(res.status, res.text).toBe(201);
    return res.body.trunk_id as string;
  };
  const count = async (as: Credentials = gw.main) =>
    (await gw.request('GET', base(as), { as })).body.meta.total_count as number;

  it('creates a trunk with a primary and a fallback URI and retrieves it', async () => {
    const primary = await newUri();
    const fallback = await newUri(gw.main, 'backup.example.com');
    const res = await create({
      name: 'inbound PBX',
      trunk_direction: 'inbound',
      primary_uri_uuid: primary,
      fallback_uri_uuid: fallback,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      api_id: expect.stringMatching(UUID),
      message: 'Trunk created successfully.',
      trunk_id: expect.stringMatching(UUID),
    });
    const got = await gw.request('GET', `${base()}${res.body.trunk_id}/`);
    expect(got.body).toEqual({
      api_id: expect.stringMatching(UUID),
      trunk_id: res.body.trunk_id,
      name: 'inbound PBX',
      trunk_direction: 'inbound',
      primary_uri_uuid: primary,
      fallback_uri_uuid: fallback,
      srtp: 'optional',
      resource_uri: `/v1/Account/${gw.main.id}/SipTrunk/Trunk/${res.body.trunk_id}/`,
    });
  });

  it('keeps an SRTP policy, and answers 400 naming the field for a bad one', async () => {
    const primary = await newUri();
    const res = await create({
      trunk_direction: 'inbound',
      primary_uri_uuid: primary,
      srtp: 'off',
    });
    expect(res.status).toBe(201);
    const path = `${base()}${res.body.trunk_id}/`;
    expect((await gw.request('GET', path)).body.srtp).toBe('off');
    for (const value of ['yes', 'dtls']) {
      // dtls is an endpoint's (WebRTC's media to a softphone), not a PBX trunk's.
      const bad = await gw.request('POST', path, { json: { srtp: value } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/srtp.*required, optional or off/);
    }
    expect((await gw.request('POST', path, { json: { srtp: 'required' } })).status).toBe(200);
    expect((await gw.request('GET', path)).body.srtp).toBe('required');
  });

  it('takes form bodies and paths without the trailing slash; the fallback is optional', async () => {
    const primary = await newUri();
    const res = await gw.request('POST', `/v1/Account/${gw.main.id}/SipTrunk/Trunk`, {
      form: {
        trunk_direction: 'inbound',
        primary_uri_uuid: primary,
        fallback_uri_uuid: '',
        extra: '1',
      },
    });
    expect(res.status).toBe(201);
    const got = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/SipTrunk/Trunk/${res.body.trunk_id}`,
    );
    expect(got.body).toMatchObject({
      name: null,
      fallback_uri_uuid: null,
      primary_uri_uuid: primary,
    });
    expect(got.body).not.toHaveProperty('extra');
  });

  it('answers 422 for a missing direction or primary URI and creates nothing', async () => {
    const primary = await newUri();
    const noDirection = await create({ primary_uri_uuid: primary });
    expect(noDirection.status).toBe(422);
    expect(noDirection.body.error).toBe('missing required parameter: trunk_direction');
    const noPrimary = await create({ trunk_direction: 'inbound' });
    expect(noPrimary.status).toBe(422);
    expect(noPrimary.body.error).toBe('missing required parameter: primary_uri_uuid');
    expect(await count()).toBe(0);
  });

  it('answers 400 for a bad direction or URI and creates nothing', async () => {
    const primary = await newUri();
    const unknown = '00000000-0000-4000-8000-000000000000';
    const cases: [Record<string, unknown>, string][] = [
      [
        { trunk_direction: 'outbound', primary_uri_uuid: primary },
        'invalid trunk_direction: must be inbound (only inbound trunks are supported)',
      ],
      [
        { trunk_direction: 'inbound', primary_uri_uuid: unknown },
        `invalid primary_uri_uuid: must be the uri_uuid of one of your origination URIs; ${unknown} is not`,
      ],
      [
        { trunk_direction: 'inbound', primary_uri_uuid: primary, fallback_uri_uuid: unknown },
        `invalid fallback_uri_uuid: must be the uri_uuid of one of your origination URIs; ${unknown} is not`,
      ],
      [
        { trunk_direction: 'inbound', primary_uri_uuid: primary, fallback_uri_uuid: primary },
        'invalid fallback_uri_uuid: must be different from primary_uri_uuid',
      ],
      [
        { trunk_direction: 'inbound', primary_uri_uuid: primary, name: 'n'.repeat(101) },
        'invalid name: must be at most 100 characters',
      ],
    ];
    for (const [body, error] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe(error);
    }
    expect(await count()).toBe(0);
  });

  it('lists newest first and pages', async () => {
    const primary = await newUri();
    for (const name of ['t0', 't1', 't2']) {
      await createOk({ name, primary_uri_uuid: primary });
      await new Promise((resolve) => setTimeout(resolve, 2)); // distinct creation times
    }
    const res = await gw.request('GET', base());
    expect(res.body.meta).toMatchObject({ limit: 20, total_count: 3 });
    expect(res.body.objects.map((o: { name: string }) => o.name)).toEqual(['t2', 't1', 't0']);
    const page = await gw.request('GET', `${base()}?limit=2`);
    expect(page.body.objects).toHaveLength(2);
    expect(page.body.meta.next).toBe(`${base()}?limit=2&offset=2`);
    expect((await gw.request('GET', `${base()}?limit=21`)).status).toBe(400);
  });

  it('updates destinations, moving which URIs are held by the trunk', async () => {
    const a = await newUri(gw.main, 'a.example.com');
    const b = await newUri(gw.main, 'b.example.com');
    const c = await newUri(gw.main, 'c.example.com');
    const id = await createOk({ primary_uri_uuid: a, fallback_uri_uuid: b });
    const path = `${base()}${id}/`;

    const res = await gw.request('POST', path, { json: { primary_uri_uuid: c, name: 'moved' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      api_id: expect.stringMatching(UUID),
      message: 'Trunk updated successfully.',
      trunk_id: id,
    });
    expect((await gw.request('GET', path)).body).toMatchObject({
      name: 'moved',
      primary_uri_uuid: c,
      fallback_uri_uuid: b,
    });
    expect((await gw.request('DELETE', `${uriBase()}${a}/`)).status).toBe(204);

    const same = await gw.request('POST', path, { json: { fallback_uri_uuid: c } });
    expect(same.status).toBe(400);
    expect(same.body.error).toBe(
      'invalid fallback_uri_uuid: must be different from primary_uri_uuid',
    );
    const outbound = await gw.request('POST', path, { json: { trunk_direction: 'outbound' } });
    expect(outbound.status).toBe(400);
    expect((await gw.request('GET', path)).body.fallback_uri_uuid).toBe(b);

    expect((await gw.request('POST', path, { json: { fallback_uri_uuid: null } })).status).toBe(
      200,
    );
    expect((await gw.request('GET', path)).body.fallback_uri_uuid).toBeNull();
    expect((await gw.request('DELETE', `${uriBase()}${b}/`)).status).toBe(204);
    await gw.request('POST', path, {
      form: { fallback_uri_uuid: await newUri(gw.main, 'd.example.com') },
    });
    expect((await gw.request('POST', path, { form: { fallback_uri_uuid: '' } })).status).toBe(200);
    expect((await gw.request('GET', path)).body.fallback_uri_uuid).toBeNull();
    expect((await gw.request('POST', `${base()}${a}/`, { json: {} })).status).toBe(404);
  });

  it('deletes with 204', async () => {
    const id = await createOk({ primary_uri_uuid: await newUri() });
    const res = await gw.request('DELETE', `${base()}${id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await gw.request('GET', `${base()}${id}/`)).status).toBe(404);
    expect((await gw.request('DELETE', `${base()}${id}/`)).status).toBe(404);
  });

  it('answers 401 without valid credentials', async () => {
    expect((await gw.request('GET', base(), { as: null })).status).toBe(401);
  });

  describe('ownership', () => {
    it('keeps subaccounts to their own trunks; the main account sees all', async () => {
      const sub1 = await gw.subaccount('one');
      const sub2 = await gw.subaccount('two');
      const mine = await createOk({ primary_uri_uuid: await newUri() });
      const first = await createOk({ primary_uri_uuid: await newUri(sub1) }, sub1);
      await createOk({ primary_uri_uuid: await newUri(sub2) }, sub2);
      for (const id of [mine, first]) {
        const path = `${base(sub2)}${id}/`;
        expect((await gw.request('GET', path, { as: sub2 })).status).toBe(404);
        expect((await gw.request('POST', path, { as: sub2, json: { name: 'x' } })).status).toBe(
          404,
        );
        expect((await gw.request('DELETE', path, { as: sub2 })).status).toBe(404);
      }
      const list = await gw.request('GET', base(sub1), { as: sub1 });
      expect(list.body.objects.map((o: { trunk_id: string }) => o.trunk_id)).toEqual([first]);
      expect(await count()).toBe(3);
    });

    it('routes a trunk only to URIs of its own account', async () => {
      const sub = await gw.subaccount();
      const mainUri = await newUri();
      const subUri = await newUri(sub);
      const fromSub = await create({ trunk_direction: 'inbound', primary_uri_uuid: mainUri }, sub);
      expect(fromSub.status).toBe(400);
      expect(fromSub.body.error).toBe(
        `invalid primary_uri_uuid: must be the uri_uuid of one of your origination URIs; ${mainUri} is not`,
      );
      const fromMain = await create({ trunk_direction: 'inbound', primary_uri_uuid: subUri });
      expect(fromMain.status).toBe(400);
      expect(fromMain.body.error).toBe(
        `invalid primary_uri_uuid: origination URI ${subUri} belongs to subaccount ${sub.id}; ` +
          'a trunk can use only URIs of its own account (the main account)',
      );
      const subTrunk = await createOk({ primary_uri_uuid: subUri }, sub);
      const repoint = await gw.request('POST', `${base()}${subTrunk}/`, {
        json: { primary_uri_uuid: mainUri },
      });
      expect(repoint.status).toBe(400);
      expect(repoint.body.error).toBe(
        `invalid primary_uri_uuid: origination URI ${mainUri} belongs to the main account; ` +
          `a trunk can use only URIs of its own account (subaccount ${sub.id})`,
      );
    });

    it('takes a subaccount trunk and its URIs along when the subaccount is deleted', async () => {
      const sub = await gw.subaccount();
      const uri = await newUri(sub);
      const trunk = await createOk({ primary_uri_uuid: uri }, sub);
      const deleted = await gw.request(
        'DELETE',
        `/v1/Account/${gw.main.id}/Subaccount/${sub.id}/?cascade=true`,
      );
      expect(deleted.status).toBe(204);
      expect((await gw.request('GET', `${base()}${trunk}/`)).status).toBe(404);
      expect((await gw.request('GET', `${uriBase()}${uri}/`)).status).toBe(404);
    });

    it.runIf(target.name === 'redis')(
      'hides one tenant from another on the same store',
      async () => {
        const other = await startGateway({
          redisUrl: target.redisUrl(),
          env: { VOXGATE_AUTH_ID: 'MA' + 'D'.repeat(18), VOXGATE_AUTH_TOKEN: 'V'.repeat(40) },
        });
        try {
          const theirUri = await newUri(other.main);
          const theirs = await createOk({ primary_uri_uuid: theirUri }, other.main);
          const ours = await createOk({ primary_uri_uuid: await newUri() });
          expect(
            (await gw.request('GET', `${base(other.main)}${ours}/`, { as: other.main })).status,
          ).toBe(404);
          expect((await gw.request('GET', `${base()}${theirs}/`)).status).toBe(404);
          const borrow = await create({ trunk_direction: 'inbound', primary_uri_uuid: theirUri });
          expect(borrow.status).toBe(400);
          expect(await count(other.main)).toBe(1);
          expect(await count()).toBe(1);
        } finally {
          await other.close();
        }
      },
    );
  });
});
