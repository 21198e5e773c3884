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
