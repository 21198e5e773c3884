import { decodeProtectedHeader, jwtVerify } from 'jose';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { startGateway, UUID, type Credentials, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

const NOW_S = 1_750_000_000;

describeEachStore('client access tokens', (target) => {
  let gw: TestGateway;
  const clock = new ManualClock();
  beforeEach(async () => {
    await target.flush();
    clock.set(NOW_S * 1000 + 400);
    gw = await startGateway({ redisUrl: target.redisUrl(), clock });
  });
  afterEach(async () => {
    await gw.close();
  });

  const path = (who: Credentials = gw.main) => `/v1/Account/${who.id}/JWT/Token/`;
  const issue = (json: Record<string, unknown>, as: Credentials = gw.main) =>
    gw.request('POST', path(as), { json, as });
  const verify = (token: string, secret: string) =>
    jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ['HS256'],
      currentDate: new Date(clock.now()),
    });

  it('signs an HS256 token with the account auth token, with the documented header and claims', async () => {
    const app = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: { app_name: 'web', answer_url: 'https://example.com/answer' },
    });
    const res = await issue({
      sub: 'alice',
      nbf: NOW_S,
      exp: NOW_S + 600,
      per: { voice: { incoming_allow: true, outgoing_allow: false } },
      app: app.body.app_id,
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['api_id', 'token']);
    expect(res.body.api_id).toMatch(UUID);
    const token = res.body.token as string;
    const rawHeader = Buffer.from(token.split('.')[0]!, 'base64url').toString();
    expect(rawHeader).toBe('{"alg":"HS256","typ":"JWT","cty":"plivo;v=1"}');
    const { payload, protectedHeader } = await verify(token, gw.main.token);
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT', cty: 'plivo;v=1' });
    expect(payload).toEqual({
      iss: gw.main.id,
      sub: 'alice',
      nbf: NOW_S,
      exp: NOW_S + 600,
      per: { voice: { incoming_allow: true, outgoing_allow: false } },
      app: app.body.app_id,
    });
  });

  it('defaults nbf to now, exp to an hour later and every permission to false', async () => {
    const res = await gw.request('POST', path());
    expect(res.status).toBe(200);
    const { payload } = await verify(res.body.token, gw.main.token);
    expect(payload).toEqual({
      iss: gw.main.id,
      nbf: NOW_S,
      exp: NOW_S + 3600,
      per: { voice: { incoming_allow: false, outgoing_allow: false } },
    });
    // A future nbf moves the default exp with it.
    const later = await issue({ nbf: NOW_S + 7200 });
    expect((await verify(later.body.token, gw.main.token).catch((e) => e)).code).toBe(
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
    );
    const claims = JSON.parse(Buffer.from(later.body.token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ nbf: NOW_S + 7200, exp: NOW_S + 7200 + 3600 });
  });

  it('signs a subaccount token with the subaccount auth token', async () => {
    const sub = await gw.subaccount();
    const res = await issue({ sub: 'bob', per: { voice: { incoming_allow: true } } }, sub);
    expect(res.status).toBe(200);
    const { payload } = await verify(res.body.token, sub.token);
    expect(payload.iss).toBe(sub.id);
    await expect(verify(res.body.token, gw.main.token)).rejects.toThrow();
    expect(decodeProtectedHeader(res.body.token)).toEqual({
      alg: 'HS256',
      typ: 'JWT',
      cty: 'plivo;v=1',
    });
  });

  it('allows exp from 3 minutes to 24 hours from now, and nothing outside', async () => {
    const rule =
      `invalid exp: must be from 3 minutes to 24 hours from now ` +
      `(${NOW_S + 180} to ${NOW_S + 86400} in Unix seconds)`;
    for (const exp of [NOW_S + 180, NOW_S + 86400]) expect((await issue({ exp })).status).toBe(200);
    for (const exp of [NOW_S + 179, NOW_S + 86401, NOW_S - 10, 0]) {
      const res = await issue({ exp });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(`${rule}; got ${exp}`);
    }
    const defaulted = await issue({ nbf: NOW_S + 86400 });
    expect(defaulted.status).toBe(400);
    expect(defaulted.body.error).toBe(
      `${rule}; the default exp of nbf + 1 hour is ${NOW_S + 90000}`,
    );
  });

  it('requires nbf before exp, and integers for both', async () => {
    const late = await issue({ nbf: NOW_S + 600, exp: NOW_S + 600 });
    expect(late.status).toBe(400);
    expect(late.body.error).toBe(`invalid nbf: must be before exp (${NOW_S + 600})`);
    for (const [field, value] of [
      ['nbf', 'soon'],
      ['exp', 1.5],
      ['nbf', -1],
    ] as const) {
      const res = await issue({ [field]: value });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(`invalid ${field}: must be an integer number of Unix seconds`);
    }
    // Earlier than now is fine for nbf.
    expect((await issue({ nbf: NOW_S - 3600, exp: NOW_S + 600 })).status).toBe(200);
  });

  it('answers 400 for a bad permission, app or issuer and 422 for incoming calls without sub', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [
        { per: 'all' },
        400,
        'invalid per: must be an object {"voice": {"incoming_allow": bool, "outgoing_allow": bool}}',
      ],
      [
        { per: { voice: { outgoing_allow: 'maybe' } } },
        400,
        'invalid per.voice.outgoing_allow: must be true or false',
      ],
      [{ app: '4242' }, 400, 'invalid app: no application 4242 in this account'],
      [{ iss: 'MA' + 'Z'.repeat(18) }, 400, `invalid iss: must be your own auth id ${gw.main.id}`],
      [{ sub: '' }, 400, 'invalid sub: must be 1 to 255 characters'],
      [
        { per: { voice: { incoming_allow: true } } },
        422,
        'missing required parameter: sub (required when incoming_allow is true)',
      ],
    ];
    for (const [body, status, error] of cases) {
      const res = await issue(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body).toEqual({ api_id: expect.stringMatching(UUID), error });
    }
  });

  it('takes form bodies with per[voice][...] keys or plain incoming_allow/outgoing_allow', async () => {
    const bracketed = await gw.request('POST', `/v1/Account/${gw.main.id}/JWT/Token`, {
      form: {
        sub: 'carol',
        nbf: String(NOW_S),
        exp: String(NOW_S + 900),
        'per[voice][incoming_allow]': 'true',
        outgoing_allow: 'true',
        ignored: 'x',
      },
    });
    expect(bracketed.status).toBe(200);
    const { payload } = await verify(bracketed.body.token, gw.main.token);
    expect(payload).toEqual({
      iss: gw.main.id,
      sub: 'carol',
      nbf: NOW_S,
      exp: NOW_S + 900,
      per: { voice: { incoming_allow: true, outgoing_allow: true } },
    });
    const bad = await gw.request('POST', path(), {
      form: { 'per[voice][incoming_allow]': 'perhaps' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid per[voice][incoming_allow]: must be true or false');
  });

  it('accepts the requests official SDKs send', async () => {
    // Node SDK: iss in the body, per.voice holding only the permissions that are true.
    const node = await issue({
      iss: gw.main.id,
      sub: 'dave',
      per: { voice: { outgoing_allow: true } },
    });
    expect(node.status).toBe(200);
    expect((await verify(node.body.token, gw.main.token)).payload.per).toEqual({
      voice: { incoming_allow: false, outgoing_allow: true },
    });
    // Python SDK: nbf and exp as strings.
    const python = await issue({
      iss: gw.main.id,
      sub: 'erin',
      nbf: String(NOW_S),
      exp: String(NOW_S + 300),
      per: { voice: { incoming_allow: false, outgoing_allow: false } },
    });
    expect(python.status).toBe(200);
    expect((await verify(python.body.token, gw.main.token)).payload.exp).toBe(NOW_S + 300);
  });

  it('does not let a subaccount name an application it cannot see', async () => {
    const sub = await gw.subaccount();
    const app = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: { app_name: 'web', answer_url: 'https://example.com/answer' },
    });
    const res = await issue({ app: app.body.app_id }, sub);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`invalid app: no application ${app.body.app_id} in this account`);
  });

  it('answers 401 without valid credentials and never logs the auth token', async () => {
    expect((await gw.request('POST', path(), { as: null, json: {} })).status).toBe(401);
    const wrong = await gw.request('POST', path(), {
      as: { id: gw.main.id, token: 'w'.repeat(40) },
      json: {},
    });
    expect(wrong.status).toBe(401);
    await issue({ sub: 'x' });
    expect(gw.logs.join('\n')).not.toContain(gw.main.token);
  });
});
