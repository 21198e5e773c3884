import { afterEach, beforeEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { PROFILE } from '../../support/profile.js';
import { describeEachStore } from '../../support/stores.js';

const TOKEN = 'operator-token-for-tests-0123456789';
const TOLL_FREE = '18445550100';

describeEachStore('the operator interface', (target) => {
  let gw: TestGateway;
  let account: string;
  beforeEach(async () => {
    await target.flush();
    gw = await startGateway({
      redisUrl: target.redisUrl(),
      env: { VOXGATE_OPERATOR_TOKEN: TOKEN },
    });
    account = `/v1/Account/${gw.main.id}`;
  });
  afterEach(async () => {
    await gw.close();
  });

  const operator = (method: 'GET' | 'POST', path: string, json?: unknown, token = TOKEN) =>
    gw.request(method, `/operator/v1/${path}`, {
      as: null,
      headers: { authorization: `Bearer ${token}` },
      ...(json === undefined ? {} : { json }),
    });

  const submit = async () => {
    await gw.request('POST', `${account}/Number/`, {
      json: { numbers: TOLL_FREE, carrier: 'c', region: 'r' },
    });
    const profile = (await gw.request('POST', `${account}/Profile/`, { json: PROFILE })).body
      .profile_uuid;
    const res = await gw.request('POST', `${account}/TollfreeVerification/`, {
      json: {
        profile_uuid: profile,
        number: TOLL_FREE,
        usecase: 'CUSTOMER_CARE',
        usecase_summary: 'support replies',
        message_sample: 'Acme support: your ticket 42 is solved',
        optin_image_url: 'https://acme.example.com/optin.png',
        optin_type: 'VIA_TEXT',
        volume: '1,000',
      },
    });
    return res.body.uuid as string;
  };

  it('lists requests across accounts by state and moves them only along legal transitions', async () => {
    const uuid = await submit();
    const listed = await operator('GET', 'TollfreeVerification/?status=SUBMITTED');
    expect(listed.status).toBe(200);
    expect(listed.body.objects).toMatchObject([{ uuid, number: TOLL_FREE, account: gw.main.id }]);
    expect((await operator('GET', 'TollfreeVerification/?status=APPROVED')).body.objects).toEqual(
      [],
    );

    const asked = await operator('POST', `TollfreeVerification/${uuid}/`, {
      status: 'UPDATE_REQUIRED',
      error_message: 'the opt-in link is dead',
    });
    expect(asked.status).toBe(200);
    const seen = await gw.request('GET', `${account}/TollfreeVerification/${uuid}/`);
    expect(seen.body).toMatchObject({
      status: 'UPDATE_REQUIRED',
      error_message: 'the opt-in link is dead',
    });
    await gw.request('POST', `${account}/TollfreeVerification/${uuid}/`, {
      json: { optin_image_url: 'https://acme.example.com/optin-2.png' },
    });
    expect(
      (await operator('POST', `TollfreeVerification/${uuid}/`, { status: 'APPROVED' })).status,
    ).toBe(200);
    const illegal = await operator('POST', `TollfreeVerification/${uuid}/`, {
      status: 'PROCESSING',
    });
    expect(illegal.status).toBe(409);
    expect(illegal.body.error).toBe(
      `toll-free verification ${uuid} is APPROVED: it cannot become PROCESSING`,
    );
    const unknown = await operator('POST', 'TollfreeVerification/nope/', { status: 'APPROVED' });
    expect(unknown.status).toBe(404);
    const docs = await gw.request('GET', '/docs', { as: null });
    expect(Object.keys(docs.body.paths)).toEqual(
      expect.arrayContaining([
        '/operator/v1/TollfreeVerification/',
        '/operator/v1/TollfreeVerification/{uuid}/',
      ]),
    );
  });

  it('takes its bearer token only, and its token opens nothing else', async () => {
    expect((await operator('GET', 'TollfreeVerification/', undefined, 'wrong-token')).status).toBe(
      401,
    );
    const basic = await gw.request('GET', '/operator/v1/TollfreeVerification/');
    expect(basic.status).toBe(401);
    const intoAccounts = await gw.request('GET', `${account}/Message/`, {
      as: null,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(intoAccounts.status).toBe(401);
    expect(gw.logs.join('\n')).not.toContain(TOKEN);

    const off = await startGateway({ redisUrl: target.redisUrl() });
    const closed = await off.request('GET', '/operator/v1/TollfreeVerification/', {
      as: null,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await off.close();
    expect(closed.status).toBe(404);
  });
});
