import * as plivo from 'plivo';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { ClientApp, paramsOf, type ReceivedCallback } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { officialSdk } from '../../support/official-sdk.js';
import { PROFILE } from '../../support/profile.js';
import { describeEachStore } from '../../support/stores.js';

/**
 * The official Node SDK (npm `plivo`, the version pinned in package.json) driving compliance
 * profiles and toll-free verification requests over HTTP, exactly as an application written
 * for it does: its own argument order, its own request encoding, its own error classes.
 */
const TOLL_FREE = '18005550100';

/** What the SDK rejects with when the API answers an error (its own error classes). */
interface SdkError {
  status: number;
  message: string;
}
const failure = (promise: Promise<unknown>): Promise<SdkError> =>
  promise.then(
    () => {
      throw new Error('the SDK call succeeded');
    },
    (error: SdkError) => error,
  );

describeEachStore('the official Node SDK on profiles and toll-free verification', (target) => {
  let gw: TestGateway;
  let sdk: plivo.Client;
  let client: ClientApp;
  beforeAll(async () => {
    client = await ClientApp.start();
  });
  afterAll(async () => {
    await client.close();
  });
  beforeEach(async () => {
    await target.flush();
    client.reset();
    gw = await startGateway({ redisUrl: target.redisUrl(), listen: true });
    sdk = officialSdk(gw);
    await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
      json: { numbers: `${TOLL_FREE},14155550100`, carrier: 'c', region: 'r' },
    });
  });
  afterEach(async () => {
    await gw.close();
  });

  /** profile.create takes its fields positionally, the subaccount second. */
  const createProfile = (changes: Partial<typeof PROFILE> = {}) => {
    const p = { ...PROFILE, ...changes };
    return sdk.profile.create(
      p.profile_alias,
      undefined as unknown as string,
      p.customer_type,
      p.entity_type,
      p.company_name,
      p.ein,
      p.vertical,
      p.ein_issuing_country,
      p.stock_symbol,
      p.stock_exchange,
      p.alt_business_id_type,
      p.website,
      p.address,
      p.authorized_contact,
      p.business_contact_email,
      'Acme',
    ) as Promise<{ profileUuid: string; message: string }>;
  };

  it('creates, reads, lists, updates and deletes a profile', async () => {
    const created = await createProfile();
    expect(created.message).toBe('Profile created successfully.');
    const uuid = created.profileUuid;

    const got = (await sdk.profile.get(uuid)) as Record<string, unknown>;
    expect(got).toMatchObject({
      profileUuid: uuid,
      profileAlias: 'acme-main',
      entityType: 'PRIVATE',
      ein: '12-3456789',
      doingBusinessAs: 'Acme',
      address: { city: 'San Francisco', postalCode: '94105', country: 'US' },
      authorizedContact: { firstName: 'Ana', email: 'ana@acme.example.com' },
    });

    const listed = (await sdk.profile.list({ limit: 5, offset: 0 })) as {
      meta: { totalCount: number };
      objects: { profileUuid: string }[];
    };
    expect(listed.meta.totalCount).toBe(1);
    expect(listed.objects.map((p) => p.profileUuid)).toEqual([uuid]);

    await sdk.profile.update(uuid, { website: 'https://www.acme.example.com' });
    expect(await sdk.profile.get(uuid)).toMatchObject({
      website: 'https://www.acme.example.com',
    });

    await sdk.profile.delete(uuid);
    const gone = await failure(sdk.profile.get(uuid));
    expect(gone.status).toBe(404);
  });

  it('gets the API error through the SDK when a profile breaks a rule', async () => {
    const bad = await failure(createProfile({ ein: '123' }));
    expect(bad.status).toBe(400);
    expect(bad.message).toMatch(/ein/);
  });

  it('runs a verification request through create, get, list, update and delete, and keeps the fields newer SDKs send', async () => {
    const profile = (await createProfile()).profileUuid;
    const created = (await sdk.tollfreeVerification.create({
      profile_uuid: profile,
      number: TOLL_FREE,
      usecase: '2FA,ACCOUNT_NOTIFICATION',
      usecase_summary: 'Log-in codes and account notices',
      message_sample: 'Acme: your code is 123456',
      opt_in_image_url: 'https://acme.example.com/optin.png',
      opt_in_type: 'WEB_FORM',
      volume: '10,000',
      callback_url: `${client.baseUrl}/tfv`,
      terms_and_conditions_link: 'https://acme.example.com/terms',
      privacy_policy_link: 'https://acme.example.com/privacy',
      optin_message: 'You are now subscribed to Acme alerts.',
      help_message: 'Acme: reply STOP to stop.',
    })) as { uuid: string; message: string };
    expect(created.message).toBe('created');
    const uuid = created.uuid;

    expect(await sdk.tollfreeVerification.get(uuid)).toMatchObject({
      uuid,
      profile_uuid: profile,
      number: TOLL_FREE,
      usecase: '2FA,ACCOUNT_NOTIFICATION',
      optin_image_url: 'https://acme.example.com/optin.png',
      optin_type: 'WEB_FORM',
      volume: '10,000',
      status: 'SUBMITTED',
      callback_method: 'POST',
    });
    const raw = await gw.request('GET', `/v1/Account/${gw.main.id}/TollfreeVerification/${uuid}/`);
    expect(raw.body).toMatchObject({
      terms_and_conditions_link: 'https://acme.example.com/terms',
      privacy_policy_link: 'https://acme.example.com/privacy',
      optin_message: 'You are now subscribed to Acme alerts.',
      help_message: 'Acme: reply STOP to stop.',
    });

    const today = new Date().toISOString().slice(0, 10);
    const listed = (await sdk.tollfreeVerification.list({
      number: TOLL_FREE,
      status: 'SUBMITTED',
      created__gte: today,
      usecase: '2FA,ACCOUNT_NOTIFICATION',
    })) as unknown as { uuid: string }[] & { meta: { totalCount: number } };
    expect(listed.map((v) => v.uuid)).toEqual([uuid]);
    expect(listed.meta.totalCount).toBe(1);
    const none = (await sdk.tollfreeVerification.list({ status: 'APPROVED' })) as unknown as [];
    expect(none).toHaveLength(0);

    const updated = (await sdk.tollfreeVerification.update(uuid, { volume: '1,000' })) as {
      message: string;
    };
    expect(updated.message).toBe(`Tollfree verification request for ${uuid} updated successfully`);
    expect(await sdk.tollfreeVerification.get(uuid)).toMatchObject({ volume: '1,000' });

    const inUse = await failure(sdk.profile.delete(profile));
    expect(inUse.status).toBe(409);
    expect(inUse.message).toBe(`profile ${profile} is in use by toll-free verification ${uuid}`);

    expect(await sdk.tollfreeVerification.delete(uuid)).toBe(true);
    expect((await failure(sdk.tollfreeVerification.get(uuid))).status).toBe(404);
    await sdk.profile.delete(profile);
  });

  it('gets the API errors through the SDK for a bad or refused request', async () => {
    const profile = (await createProfile()).profileUuid;
    const request = {
      profile_uuid: profile,
      number: TOLL_FREE,
      usecase: '2FA',
      usecase_summary: 'codes',
      message_sample: 'Acme: your code is 1',
      optin_image_url: 'https://acme.example.com/optin.png',
      optin_type: 'WEB_FORM',
      volume: '10,000',
    };
    const volume = await failure(sdk.tollfreeVerification.create({ ...request, volume: '7' }));
    expect(volume.status).toBe(400);
    expect(volume.message).toMatch(/^volume must be one of 1,000, 10,000/);
    const notTollFree = await failure(
      sdk.tollfreeVerification.create({ ...request, number: '14155550100' }),
    );
    expect(notTollFree.message).toBe('number 14155550100 is not a US or Canadian toll-free number');
    const link = await failure(
      sdk.tollfreeVerification.create({ ...request, privacy_policy_link: 'acme.example.com' }),
    );
    expect(link.message).toBe('privacy_policy_link must be an http or https URL');

    const { uuid } = (await sdk.tollfreeVerification.create(request)) as { uuid: string };
    const twice = await failure(sdk.tollfreeVerification.create(request));
    expect(twice.status).toBe(409);
    const record = await gw.gateway.state.tollfreeVerifications.get(gw.main.id, uuid);
    await gw.gateway.tollfree.move(record!, 'APPROVED', {});
    const late = await failure(sdk.tollfreeVerification.update(uuid, { volume: '1,000' }));
    expect(late.status).toBe(409);
    expect(late.message).toBe(
      `toll-free verification ${uuid} is APPROVED: it can be updated only when SUBMITTED or UPDATE_REQUIRED`,
    );
  });

  it('signs the status callback so that the SDK’s own validators accept it', async () => {
    const profile = (await createProfile()).profileUuid;
    const { uuid } = (await sdk.tollfreeVerification.create({
      profile_uuid: profile,
      number: TOLL_FREE,
      usecase: '2FA',
      usecase_summary: 'codes',
      message_sample: 'Acme: your code is 1',
      optin_image_url: 'https://acme.example.com/optin.png',
      optin_type: 'WEB_FORM',
      volume: '10,000',
      callback_url: `${client.baseUrl}/tfv?tag=a%2Cb&id=7`,
    })) as { uuid: string };
    const record = await gw.gateway.state.tollfreeVerifications.get(gw.main.id, uuid);
    await gw.gateway.tollfree.move(record!, 'APPROVED', {});
    const [callback] = await client.waitForRequests(1);
    expect(paramsOf(callback!)).toMatchObject({ uuid, status: 'APPROVED', number: TOLL_FREE });
    expectSdkAccepts(callback!, gw.main.token);
    // Someone else's token is refused by the same validators: the check is not vacuous.
    expect(v3Valid(callback!, 'x'.repeat(40))).toBe(false);
  });
});

const header = (callback: ReceivedCallback, name: string) =>
  String(callback.headers[name.toLowerCase()]);

function v3Valid(callback: ReceivedCallback, token: string): boolean {
  const params = Object.fromEntries(new URLSearchParams(callback.body));
  return plivo.validateV3Signature(
    callback.method,
    callback.url,
    header(callback, 'X-Service-Signature-V3-Nonce'),
    token,
    header(callback, 'X-Service-Signature-V3'),
    params,
  ) as boolean;
}

function expectSdkAccepts(callback: ReceivedCallback, token: string): void {
  expect(v3Valid(callback, token)).toBe(true);
  const url = new URL(callback.url);
  expect(
    plivo.validateSignature(
      `${url.origin}${url.pathname}`,
      header(callback, 'X-Service-Signature-V2-Nonce'),
      header(callback, 'X-Service-Signature-V2'),
      token,
    ),
  ).toBe(true);
}
