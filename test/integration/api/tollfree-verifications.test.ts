import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { UPDATE_WINDOW_MS } from '../../../src/tollfree/verifications.js';
import { ClientApp, expectValidSignatures, paramsOf } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';
import { PROFILE } from '../../support/profile.js';

const TOLL_FREE = '18005550100';
const OTHER_TOLL_FREE = '18885550111';

describeEachStore('toll-free verification requests', (target) => {
  let gw: TestGateway;
  let client: ClientApp;
  let base: string;
  let profile: string;
  let clock: ManualClock;
  beforeAll(async () => {
    client = await ClientApp.start();
  });
  afterAll(async () => {
    await client.close();
  });
  beforeEach(async () => {
    await target.flush();
    client.reset();
    clock = new ManualClock(Date.now());
    gw = await startGateway({ redisUrl: target.redisUrl(), clock });
    const account = `/v1/Account/${gw.main.id}`;
    base = `${account}/TollfreeVerification/`;
    await gw.request('POST', `${account}/Number/`, {
      json: { numbers: `${TOLL_FREE},${OTHER_TOLL_FREE},14155550100`, carrier: 'c', region: 'r' },
    });
    profile = (await gw.request('POST', `${account}/Profile/`, { json: PROFILE })).body
      .profile_uuid;
  });
  afterEach(async () => {
    await gw.close();
  });

  const request = (number = TOLL_FREE, changes: Record<string, unknown> = {}) => ({
    profile_uuid: profile,
    number,
    usecase: '2FA,ACCOUNT_NOTIFICATION',
    usecase_summary: 'Log-in codes and account notices for our customers',
    message_sample: 'Your Acme code is 123456',
    optin_image_url: 'https://acme.example.com/optin.png',
    optin_type: 'WEB_FORM',
    volume: '10,000',
    callback_url: `${client.baseUrl}/tfv`,
    ...changes,
  });
  const get = async (uuid: string) => (await gw.request('GET', `${base}${uuid}/`)).body;

  it('creates a request, and follows it through UPDATE_REQUIRED, an update back to SUBMITTED, and APPROVED', async () => {
    const created = await gw.request('POST', base, { json: request() });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ message: 'created' });
    const uuid = created.body.uuid as string;
    const first = await get(uuid);
    expect(first).toMatchObject({
      number: TOLL_FREE,
      status: 'SUBMITTED',
      usecase: '2FA,ACCOUNT_NOTIFICATION',
      error_message: '',
      callback_method: 'POST',
    });
    expect(first.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const again = await gw.request('POST', base, { json: request() });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe(
      `number ${TOLL_FREE} already has toll-free verification ${uuid} (SUBMITTED)`,
    );

    const record = await gw.gateway.state.tollfreeVerifications.get(gw.main.id, uuid);
    await gw.gateway.tollfree.move(record!, 'UPDATE_REQUIRED', {
      error_message: 'the sample must name the brand',
    });
    const updated = await gw.request('POST', `${base}${uuid}/`, {
      json: { message_sample: 'Acme: your code is 123456' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.message).toBe(
      `Tollfree verification request for ${uuid} updated successfully`,
    );
    const back = await get(uuid);
    expect(back).toMatchObject({
      status: 'SUBMITTED',
      message_sample: 'Acme: your code is 123456',
    });
    expect(back.history.map((h: { status: string }) => h.status)).toEqual([
      'SUBMITTED',
      'UPDATE_REQUIRED',
      'SUBMITTED',
    ]);
    // The move's callback and the update's go out moments apart, each its own request: they
    // can arrive either way round (the history above has their order).
    const callbacks = await client.waitForRequests(2);
    expect(callbacks.map(paramsOf)).toEqual(
      expect.arrayContaining([
        {
          uuid,
          number: TOLL_FREE,
          status: 'UPDATE_REQUIRED',
          error_message: 'the sample must name the brand',
        },
        { uuid, number: TOLL_FREE, status: 'SUBMITTED', error_message: '' },
      ]),
    );
    expectValidSignatures(callbacks[0]!, { accountToken: gw.main.token, mainToken: gw.main.token });

    const submitted = await gw.gateway.state.tollfreeVerifications.get(gw.main.id, uuid);
    await gw.gateway.tollfree.move(submitted!, 'APPROVED');
    expect((await get(uuid)).status).toBe('APPROVED');
    const late = await gw.request('POST', `${base}${uuid}/`, { json: { volume: '1,000' } });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe(
      `toll-free verification ${uuid} is APPROVED: it can be updated only when SUBMITTED or UPDATE_REQUIRED`,
    );
    const gone = await gw.request('DELETE', `${base}${uuid}/`);
    expect(gone.status).toBe(409);
    await expect(
      gw.gateway.tollfree.move(
        (await gw.gateway.state.tollfreeVerifications.get(gw.main.id, uuid))!,
        'SUBMITTED',
      ),
    ).rejects.toThrow(`toll-free verification ${uuid} is APPROVED: it cannot become SUBMITTED`);
    const inUse = await gw.request('DELETE', `/v1/Account/${gw.main.id}/Profile/${profile}/`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error).toBe(`profile ${profile} is in use by toll-free verification ${uuid}`);
  });

  it('refuses a rejected use case for the same number, and lists with every filter', async () => {
    const uuid = (await gw.request('POST', base, { json: request() })).body.uuid as string;
    const record = await gw.gateway.state.tollfreeVerifications.get(gw.main.id, uuid);
    await gw.gateway.tollfree.move(record!, 'REJECTED', { rejection_reason: 'sample mismatch' });
    expect(await get(uuid)).toMatchObject({
      status: 'REJECTED',
      rejection_reason: 'sample mismatch',
    });
    const resubmitted = await gw.request('POST', base, {
      json: request(TOLL_FREE, { usecase: 'MARKETING,2FA' }),
    });
    expect(resubmitted.status).toBe(400);
    expect(resubmitted.body.error).toBe(
      `usecase 2FA was rejected for number ${TOLL_FREE} and cannot be submitted again`,
    );
    const aliases = await gw.request('POST', base, {
      json: request(OTHER_TOLL_FREE, {
        optin_image_url: undefined,
        optin_type: undefined,
        opt_in_image_url: 'https://acme.example.com/optin.png',
        opt_in_type: 'VERBAL',
      }),
    });
    expect(aliases.status).toBe(201);
    expect(await get(aliases.body.uuid)).toMatchObject({ optin_type: 'VERBAL' });
    await gw.request('DELETE', `${base}${aliases.body.uuid}/`);
    const fresh = await gw.request('POST', base, {
      json: request(TOLL_FREE, { usecase: 'MARKETING' }),
    });
    expect(fresh.status).toBe(201);
    await gw.request('POST', base, { json: request(OTHER_TOLL_FREE) });

    const list = async (query: string) =>
      (await gw.request('GET', `${base}?${query}`)).body.objects
        .map((o: { number: string; status: string }) => `${o.number}:${o.status}`)
        .sort();
    expect(await list('')).toEqual([
      `${TOLL_FREE}:REJECTED`,
      `${TOLL_FREE}:SUBMITTED`,
      `${OTHER_TOLL_FREE}:SUBMITTED`,
    ]);
    expect(await list('status=REJECTED')).toEqual([`${TOLL_FREE}:REJECTED`]);
    expect(await list(`number=%2B${OTHER_TOLL_FREE}`)).toEqual([`${OTHER_TOLL_FREE}:SUBMITTED`]);
    expect(await list('usecase=MARKETING')).toEqual([`${TOLL_FREE}:SUBMITTED`]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await list(`created=${today}`)).toHaveLength(3);
    expect(await list('created__lt=2020-01-01')).toEqual([]);
    const wide = await gw.request('GET', `${base}?created__gte=2020-01-01&created__lte=2020-03-01`);
    expect(wide.status).toBe(400);
    expect(wide.body.error).toBe('invalid created: must be a range of at most 30 days');

    const sub = await gw.subaccount();
    const theirs = `/v1/Account/${sub.id}/TollfreeVerification/`;
    for (const [method, path] of [
      ['GET', `${theirs}${uuid}/`],
      ['POST', `${theirs}${uuid}/`],
      ['DELETE', `${theirs}${uuid}/`],
    ] as const) {
      const res = await gw.request(method, path, {
        as: sub,
        ...(method === 'POST' ? { json: { volume: '1,000' } } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await gw.request('GET', theirs, { as: sub })).body.objects).toEqual([]);
  });

  it('checks every field before anything is written', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [
        { number: '14155550100' },
        400,
        'number 14155550100 is not a US or Canadian toll-free number',
      ],
      [{ usecase: 'SPAM' }, 400, 'usecase SPAM is not one of 2FA, ACCOUNT_NOTIFICATION'],
      [{ usecase_summary: 'x'.repeat(501) }, 400, 'usecase_summary is at most 500 characters'],
      [{ message_sample: 'x'.repeat(1001) }, 400, 'message_sample is at most 1,000 characters'],
      [{ message_sample: undefined }, 422, 'missing required parameter: message_sample'],
      [{ optin_type: 'SMOKE_SIGNAL' }, 400, 'optin_type must be one of VERBAL, WEB_FORM'],
      [{ volume: '42' }, 400, 'volume must be one of 1,000, 10,000'],
      [{ extra_data: 'x'.repeat(101) }, 400, 'extra_data is at most 100 characters'],
      [{ profile_uuid: 'nope' }, 400, 'profile_uuid nope is not a profile of this account'],
      [{ number: '18775550123' }, 400, 'number 18775550123 is not a number of this account'],
    ];
    for (const [change, status, error] of cases) {
      const res = await gw.request('POST', base, { json: request(TOLL_FREE, change) });
      expect(res.status, JSON.stringify(change)).toBe(status);
      expect(res.body.error).toContain(error);
    }
    expect((await gw.request('GET', base)).body.objects).toEqual([]);
  });

  it('rejects a request left in UPDATE_REQUIRED for six days, once, whichever node sweeps', async () => {
    const uuid = (await gw.request('POST', base, { json: request() })).body.uuid as string;
    const stored = () => gw.gateway.state.tollfreeVerifications.get(gw.main.id, uuid);
    await gw.gateway.tollfree.move((await stored())!, 'UPDATE_REQUIRED', { error_message: 'more' });
    clock.advance(UPDATE_WINDOW_MS - 1);
    expect(await gw.gateway.tollfree.expireOverdue(gw.main.id, clock.now())).toBe(0);
    clock.advance(1);
    // A second node on the same store sweeps at the same moment (on Redis; the embedded store
    // is one node's own).
    const other =
      target.name === 'redis'
        ? await startGateway({
            redisUrl: target.redisUrl(),
            clock,
            env: { VOXGATE_AUTH_ID: gw.main.id, VOXGATE_AUTH_TOKEN: gw.main.token },
          })
        : null;
    const counts = await Promise.all([
      gw.gateway.tollfree.expireOverdue(gw.main.id, clock.now()),
      ...(other ? [other.gateway.tollfree.expireOverdue(gw.main.id, clock.now())] : []),
    ]);
    await other?.close();
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await get(uuid)).toMatchObject({
      status: 'REJECTED',
      rejection_reason: 'NO_UPDATE_WITHIN_SIX_DAYS',
    });
    await client.waitForRequests(2);
    await new Promise((r) => setTimeout(r, 200));
    // Each callback is its own request, the second sent moments after the first (at once on the
    // embedded store): sorted, as they can arrive either way round.
    const statuses = client.requestsTo('/tfv').map((r) => r.params.status);
    expect(statuses.sort()).toEqual(['REJECTED', 'UPDATE_REQUIRED']);
    expect(await gw.gateway.tollfree.expireOverdue(gw.main.id, clock.now())).toBe(0);
  });
});
