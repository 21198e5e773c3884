import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';

const OPERATOR_TOKEN = 'operator-token-for-tests-0123456789';

const base64 = (id: string, token: string) =>
  Buffer.from(`${id}:${token}`, 'utf8').toString('base64');

describe('authentication challenges and schemes', () => {
  let gw: TestGateway;
  let account: string;
  beforeAll(async () => {
    gw = await startGateway({ env: { VOXGATE_OPERATOR_TOKEN: OPERATOR_TOKEN } });
    account = `/v1/Account/${gw.main.id}/`;
  });
  afterAll(async () => {
    await gw.close();
  });

  const expectChallenge = (
    res: { status: number; headers: Record<string, unknown>; body: unknown },
    challenge: string,
    error: string,
  ) => {
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(challenge);
    expect(res.body).toEqual({ api_id: expect.stringMatching(UUID), error });
  };

  it('answers every 401 of the account API with a Basic challenge (RFC 7235 3.1)', async () => {
    const challenge = 'Basic realm="voxgate"';
    expectChallenge(
      await gw.request('GET', account, { as: null }),
      challenge,
      'authentication required: use HTTP Basic with your auth id and auth token',
    );
    expectChallenge(
      await gw.request('GET', account, { as: { id: gw.main.id, token: 'wrong' } }),
      challenge,
      'authentication failed: wrong auth id or auth token',
    );
    expectChallenge(
      await gw.request('POST', `${account}Application/`, {
        as: null,
        json: { app_name: 'a', answer_url: 'https://example.com/a' },
      }),
      challenge,
      'authentication required: use HTTP Basic with your auth id and auth token',
    );
    const sub = await gw.subaccount('challenged');
    expectChallenge(
      await gw.request('GET', `/v1/Account/${sub.id}/`),
      challenge,
      `the credentials are not those of account ${sub.id}`,
    );
    // Nothing was created by the refused request.
    expect((await gw.request('GET', `${account}Application/`)).body.meta.total_count).toBe(0);
    // An answered request carries no challenge.
    const ok = await gw.request('GET', account);
    expect(ok.status).toBe(200);
    expect(ok.headers['www-authenticate']).toBeUndefined();
  });

  it('takes the Basic scheme in any case (RFC 7235 2.1), and only right credentials', async () => {
    const credentials = base64(gw.main.id, gw.main.token);
    for (const scheme of ['Basic', 'basic', 'BASIC', 'bAsIc']) {
      const res = await gw.request('GET', account, {
        as: null,
        headers: { authorization: `${scheme} ${credentials}` },
      });
      expect(res.status).toBe(200);
      expect(res.body.auth_id).toBe(gw.main.id);
      expectChallenge(
        await gw.request('GET', account, {
          as: null,
          headers: { authorization: `${scheme} ${base64(gw.main.id, 'wrong')}` },
        }),
        'Basic realm="voxgate"',
        'authentication failed: wrong auth id or auth token',
      );
    }
    // Another scheme carrying the same credentials is no Basic.
    expectChallenge(
      await gw.request('GET', account, {
        as: null,
        headers: { authorization: `Bearer ${credentials}` },
      }),
      'Basic realm="voxgate"',
      'authentication required: use HTTP Basic with your auth id and auth token',
    );
  });

  it("takes the operator's Bearer scheme in any case, and only its token", async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await gw.request('GET', '/operator/v1/TollfreeVerification/', {
        as: null,
        headers: { authorization: `${scheme} ${OPERATOR_TOKEN}` },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ objects: [] });
      expectChallenge(
        await gw.request('GET', '/operator/v1/TollfreeVerification/', {
          as: null,
          headers: { authorization: `${scheme} ${OPERATOR_TOKEN}x` },
        }),
        'Bearer realm="voxgate operator"',
        'the operator interface takes its bearer token (VOXGATE_OPERATOR_TOKEN)',
      );
    }
    // The account's credentials never open it, whatever the scheme.
    expect(
      (
        await gw.request('GET', '/operator/v1/TollfreeVerification/', {
          headers: { authorization: `basic ${base64(gw.main.id, gw.main.token)}` },
          as: null,
        })
      ).status,
    ).toBe(401);
  });

  it("answers the operator interface's 401 with a Bearer challenge", async () => {
    expectChallenge(
      await gw.request('GET', '/operator/v1/TollfreeVerification/', { as: null }),
      'Bearer realm="voxgate operator"',
      'the operator interface takes its bearer token (VOXGATE_OPERATOR_TOKEN)',
    );
  });
});

describe('wrong credentials are throttled per source address', () => {
  let gw: TestGateway;
  let account: string;
  /** The gateway's clock stands still but for `later` ms, so the waits it answers are exact. */
  const start = Date.now();
  let later = 0;
  const WRONG = 'wrong-token-0123456789-abcdefghijklmnopq';
  beforeAll(async () => {
    gw = await startGateway({ clock: { now: () => start + later } });
    account = `/v1/Account/${gw.main.id}/`;
  });
  afterAll(async () => {
    await gw.close();
  });

  const get = (remoteAddress: string | undefined, token: string | null = WRONG) =>
    gw.request('GET', account, {
      as: token === null ? null : { id: gw.main.id, token },
      ...(remoteAddress ? { remoteAddress } : {}),
    });
  const statusesOf = async (
    n: number,
    remoteAddress: string | undefined,
    token: string | null = WRONG,
  ) => {
    const statuses: number[] = [];
    for (let k = 0; k < n; k += 1) statuses.push((await get(remoteAddress, token)).status);
    return statuses;
  };
  const expectThrottled = (
    res: { status: number; headers: Record<string, unknown>; body: unknown },
    retryAfter: number,
  ) => {
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe(String(retryAfter));
    expect(res.body).toEqual({
      api_id: expect.stringMatching(UUID),
      error: `too many failed authentications from this address (20 in 60 s): retry in ${retryAfter} s`,
    });
  };

  it('answers 429 after 20 wrong tokens from loopback, unchecked, until the window passes', async () => {
    // inject's address is 127.0.0.1: loopback is not exempt.
    const statuses = await statusesOf(150, undefined);
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(130);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    // The right token from the same address is not even checked.
    expectThrottled(await get(undefined, gw.main.token), 60);
    // The right token from another address is unaffected.
    expect((await get('198.51.100.2', gw.main.token)).status).toBe(200);

    later += 30_000;
    expectThrottled(await get(undefined, gw.main.token), 30);
    later += 30_000;
    expect((await get(undefined, gw.main.token)).status).toBe(200);
    // The count starts again.
    expect(await statusesOf(20, undefined)).toEqual(Array(20).fill(401));
    expectThrottled(await get(undefined), 60);

    // One warning for the address, and no secret in any log line.
    const warnings = gw.logs.filter((line) => line.includes('wrong credentials from one address'));
    expect(warnings).toHaveLength(2);
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      source: '127.0.0.1',
      failures: 20,
      window_s: 60,
    });
    const basicOf = (token: string) =>
      Buffer.from(`${gw.main.id}:${token}`, 'utf8').toString('base64');
    for (const secret of [WRONG, gw.main.token, basicOf(WRONG), basicOf(gw.main.token)])
      expect(gw.logs.filter((line) => line.includes(secret))).toEqual([]);
  });

  it('counts neither successful requests nor requests without credentials', async () => {
    const source = '198.51.100.3';
    expect(await statusesOf(30, source, gw.main.token)).toEqual(Array(30).fill(200));
    expect(await statusesOf(30, source, null)).toEqual(Array(30).fill(401));
    expect(await statusesOf(19, source)).toEqual(Array(19).fill(401));
    // A success in between neither counts nor clears the count.
    expect((await get(source, gw.main.token)).status).toBe(200);
    expect((await get(source)).status).toBe(401);
    expectThrottled(await get(source), 60);
  });

  it('counts unreadable credentials as wrong, and not an auth id no account has', async () => {
    // An unknown id guesses no token, and after a wiped store every id is unknown for a moment:
    // a busy client must not be locked out then.
    const source = '198.51.100.4';
    for (let k = 0; k < 30; k += 1) {
      const unknown = await gw.request('GET', account, {
        as: { id: 'MA00000000000000000X', token: WRONG },
        remoteAddress: source,
      });
      expect(unknown.status).toBe(401);
      expect(unknown.body.error).toBe('authentication failed: wrong auth id or auth token');
    }
    expect((await get(source, gw.main.token)).status).toBe(200);
    for (let k = 0; k < 20; k += 1) {
      const garbled = await gw.request('GET', account, {
        as: null,
        headers: { authorization: 'Basic !!!' },
        remoteAddress: source,
      });
      expect(garbled.status).toBe(401);
    }
    expectThrottled(await get(source, gw.main.token), 60);
  });
});
