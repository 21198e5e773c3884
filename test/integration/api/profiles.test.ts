import { afterEach, beforeEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { PROFILE } from '../../support/profile.js';
import { describeEachStore } from '../../support/stores.js';

describeEachStore('compliance profiles', (target) => {
  let gw: TestGateway;
  let base: string;
  beforeEach(async () => {
    await target.flush();
    gw = await startGateway({ redisUrl: target.redisUrl() });
    base = `/v1/Account/${gw.main.id}/Profile/`;
  });
  afterEach(async () => {
    await gw.close();
  });

  it('creates, gets, lists, updates and deletes a profile with the fields the SDK sends', async () => {
    const created = await gw.request('POST', base, { json: PROFILE });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ message: 'Profile created successfully.' });
    const id = created.body.profile_uuid as string;
    const got = await gw.request('GET', `${base}${id}/`);
    expect(got.body).toMatchObject({
      ...PROFILE,
      profile_uuid: id,
      authorized_contact: { ...PROFILE.authorized_contact, phone: '14155550100' },
    });
    expect((await gw.request('GET', base)).body.meta.total_count).toBe(1);
    const updated = await gw.request('POST', `${base}${id}/`, {
      json: { website: 'acme.example.org', vertical: 'technology' },
    });
    expect(updated.status).toBe(200);
    expect((await gw.request('GET', `${base}${id}/`)).body).toMatchObject({
      website: 'acme.example.org',
      vertical: 'TECHNOLOGY',
      company_name: 'Acme Corp',
    });
    const sub = await gw.subaccount();
    const foreign = await gw.request('GET', `/v1/Account/${sub.id}/Profile/${id}/`, { as: sub });
    expect(foreign.status).toBe(404);
    expect((await gw.request('DELETE', `${base}${id}/`)).status).toBe(204);
    expect((await gw.request('GET', `${base}${id}/`)).status).toBe(404);
  });

  it('refuses each bad field with a message naming it, and stores nothing', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [
        { ein: '123456789X' },
        400,
        'ein must be a US EIN: two digits, a dash and seven digits (12-3456789)',
      ],
      [
        { website: 'not a site' },
        400,
        'website must be a web address (https://example.com or example.com)',
      ],
      [
        { business_contact_email: 'nobody' },
        400,
        'business_contact_email is not an e-mail address',
      ],
      [
        { address: { ...PROFILE.address, country: 'USA' } },
        400,
        'address.country must be a two-letter country code (ISO 3166-1)',
      ],
      [
        { address: { ...PROFILE.address, city: '' } },
        422,
        'missing required parameter: address.city',
      ],
      [{ entity_type: 'PUBLIC' }, 422, 'missing required parameter: stock_symbol'],
      [{ vertical: 'SPACE' }, 400, 'vertical must be one of PROFESSIONAL'],
      [
        { authorized_contact: { ...PROFILE.authorized_contact, phone: '12' } },
        400,
        'authorized_contact.phone is not a valid E.164 number',
      ],
      [{ profile_alias: undefined }, 422, 'missing required parameter: profile_alias'],
    ];
    for (const [change, status, error] of cases) {
      const res = await gw.request('POST', base, { json: { ...PROFILE, ...change } });
      expect(res.status, JSON.stringify(change)).toBe(status);
      expect(res.body.error).toContain(error);
    }
    const other = await gw.request('POST', base, {
      json: { ...PROFILE, ein_issuing_country: 'GB', ein: 'GB123456789' },
    });
    expect(other.status).toBe(201);
    expect((await gw.request('GET', base)).body.meta.total_count).toBe(1);
  });
});
