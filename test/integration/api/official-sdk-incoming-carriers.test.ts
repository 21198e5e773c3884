import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type Credentials, type TestGateway } from '../../support/gateway.js';
import { LegacySdk, type LegacyAnswer } from '../../support/legacy-sdk.js';
import { until } from '../../support/wait.js';

/**
 * IncomingCarrier/ through the official Node SDK calls that have it: get_incoming_carriers,
 * get_incoming_carrier, create_incoming_carrier, modify_incoming_carrier and
 * delete_incoming_carrier of the SDK 0.4.2 (the current 4.x has none). The SDK runs as its
 * users run it, on its default host over HTTPS, through examples/sdk-bridge.ts (see
 * test/support/legacy-sdk.ts); each call is checked for the answer the SDK handed back, the
 * one request the gateway saw for it, and the carrier stored, read back through the API.
 * "Another account" is a subaccount of the main account, which sees none of the main's.
 */
const NUMBER = '14155550162';

let gw: TestGateway;
let sdk: LegacySdk;
let app: ClientApp;
let other: Credentials;
let base: string;

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true, env: { VOXGATE_INBOUND_CARRIERS: 'enforce' } });
  sdk = await LegacySdk.start(gw);
  other = await gw.subaccount('other');
  base = `/v1/Account/${gw.main.id}`;
}, 30_000);

afterAll(async () => {
  await sdk?.stop();
  await gw?.close();
  await app?.close();
});

/** The requests the gateway answered since `from`: "METHOD /path?query status". */
function requestsSince(from: number): string[] {
  return gw.logs
    .slice(from)
    .map((line) => JSON.parse(line) as { req?: { method: string; url: string }; res?: object })
    .filter((entry) => entry.req && entry.res)
    .map((entry) => {
      const { req, res } = entry as {
        req: { method: string; url: string };
        res: { statusCode: number };
      };
      return `${req.method} ${req.url.replace(gw.main.id, '{auth_id}')} ${res.statusCode}`;
    });
}

/** One SDK call: what it called back with, and the one request the gateway saw for it. */
async function sdkCall(
  call: string,
  params: Record<string, unknown>,
  as: Credentials = gw.main,
): Promise<LegacyAnswer & { request: string }> {
  const from = gw.logs.length;
  const answer = await sdk.call(call, params, as);
  expect(answer.error, sdk.stderr()).toBeUndefined();
  await until(() => requestsSince(from).length > 0, 5_000);
  const requests = requestsSince(from);
  expect(requests).toHaveLength(1);
  return { ...answer, request: requests[0]! };
}

/** The carrier as the API stores it (main account), without the api_id of the answer. */
async function stored(id: string): Promise<Record<string, unknown> | number> {
  const res = await gw.request('GET', `${base}/IncomingCarrier/${id}/`);
  if (res.status !== 200) return res.status;
  const carrier = { ...(res.body as Record<string, unknown>) };
  delete carrier.api_id;
  return carrier;
}

describe('the official Node SDK 0.4.2, over HTTPS', () => {
  it('creates, reads, lists, changes and deletes a carrier, each with one request of the shape it sends', async () => {
    const created = await sdkCall('create_incoming_carrier', {
      name: 'SDK Carrier',
      ip_set: '127.0.0.1,192.0.2.0/24',
    });
    expect(created).toEqual({
      status: 201,
      body: { api_id: expect.any(String), message: 'created', carrier_id: expect.any(String) },
      request: 'POST /v1/Account/{auth_id}/IncomingCarrier/ 201',
    });
    const id = created.body.carrier_id as string;
    expect(id).toMatch(/^\d{14}$/);
    const carrier = {
      carrier_id: id,
      name: 'SDK Carrier',
      ip_set: '127.0.0.1,192.0.2.0/24',
      voice: true,
      sms: false,
      resource_uri: `${base}/IncomingCarrier/${id}/`,
    };
    expect(await stored(id)).toEqual(carrier);

    expect(await sdkCall('get_incoming_carrier', { carrier_id: id })).toEqual({
      status: 200,
      body: { api_id: expect.any(String), ...carrier },
      request: `GET /v1/Account/{auth_id}/IncomingCarrier/${id}/ 200`,
    });

    const listed = await sdkCall('get_incoming_carriers', {});
    expect(listed.request).toBe('GET /v1/Account/{auth_id}/IncomingCarrier/ 200');
    expect(listed.status).toBe(200);
    expect(listed.body.meta).toMatchObject({ total_count: 1, limit: 20, offset: 0 });
    expect(listed.body.objects).toEqual([carrier]);
    const page = await sdkCall('get_incoming_carriers', { limit: 1, offset: 0 });
    expect(page.request).toBe('GET /v1/Account/{auth_id}/IncomingCarrier/?limit=1&offset=0 200');
    expect(page.body.meta).toMatchObject({ total_count: 1, limit: 1, offset: 0 });

    const changed = await sdkCall('modify_incoming_carrier', {
      carrier_id: id,
      ip_set: '198.51.100.7,2001:db8::/32',
    });
    expect(changed).toEqual({
      status: 200,
      body: { api_id: expect.any(String), message: 'changed' },
      request: `POST /v1/Account/{auth_id}/IncomingCarrier/${id}/ 200`,
    });
    expect(await stored(id)).toEqual({ ...carrier, ip_set: '198.51.100.7,2001:db8::/32' });

    expect(await sdkCall('delete_incoming_carrier', { carrier_id: id })).toEqual({
      status: 204,
      body: null,
      request: `DELETE /v1/Account/{auth_id}/IncomingCarrier/${id}/ 204`,
    });
    expect(await stored(id)).toBe(404);

    // Every one of them came through the bridge, over TLS; none tried to leave loopback.
    await until(() => sdk.bridged().length === 6, 5_000);
    expect(sdk.bridged().map((line) => line.replace(gw.main.id, '{auth_id}'))).toEqual([
      'POST /v1/Account/{auth_id}/IncomingCarrier/ -> 201',
      `GET /v1/Account/{auth_id}/IncomingCarrier/${id}/ -> 200`,
      'GET /v1/Account/{auth_id}/IncomingCarrier/ -> 200',
      'GET /v1/Account/{auth_id}/IncomingCarrier/?limit=1&offset=0 -> 200',
      `POST /v1/Account/{auth_id}/IncomingCarrier/${id}/ -> 200`,
      `DELETE /v1/Account/{auth_id}/IncomingCarrier/${id}/ -> 204`,
    ]);
    expect(sdk.stderr()).not.toMatch(/loopback-only: refused/);
  });

  it('gets 400 naming the bad CIDR, on create and on modify, and nothing is stored', async () => {
    const bad = await sdkCall('create_incoming_carrier', {
      name: 'Bad',
      ip_set: '127.0.0.1,10.0.0.0/33',
    });
    expect(bad).toEqual({
      status: 400,
      body: {
        api_id: expect.any(String),
        error:
          'invalid ip_set: 10.0.0.0/33 is not an IP address or a CIDR range (like 192.0.2.0/24)',
      },
      request: 'POST /v1/Account/{auth_id}/IncomingCarrier/ 400',
    });
    expect((await gw.request('GET', `${base}/IncomingCarrier/`)).body.meta.total_count).toBe(0);

    const good = await sdkCall('create_incoming_carrier', { name: 'Good', ip_set: '127.0.0.1' });
    const id = good.body.carrier_id as string;
    const before = await stored(id);
    const changed = await sdkCall('modify_incoming_carrier', {
      carrier_id: id,
      ip_set: '192.0.2.0/24,2001:db8::/129',
    });
    expect(changed.status).toBe(400);
    expect(changed.body.error).toBe(
      'invalid ip_set: 2001:db8::/129 is not an IP address or a CIDR range (like 192.0.2.0/24)',
    );
    expect(await stored(id)).toEqual(before);
    expect((await sdkCall('delete_incoming_carrier', { carrier_id: id })).status).toBe(204);
  });

  it('gets 409 deleting a carrier a number still uses, naming the number, and the carrier stays', async () => {
    const created = await sdkCall('create_incoming_carrier', {
      name: 'Held',
      ip_set: '127.0.0.1',
    });
    const id = created.body.carrier_id as string;
    const application = await gw.request('POST', `${base}/Application/`, {
      json: { app_name: 'held carrier', answer_url: `${app.baseUrl}/answer` },
    });
    const added = await gw.request('POST', `${base}/Number/`, {
      json: { numbers: NUMBER, carrier: id, region: 'r', app_id: application.body.app_id },
    });
    expect(added.status, added.text).toBe(201);

    const refused = await sdkCall('delete_incoming_carrier', { carrier_id: id });
    expect(refused).toEqual({
      status: 409,
      body: {
        api_id: expect.any(String),
        error: `incoming carrier ${id} carries 1 number(s) (${NUMBER}): move them to another carrier first`,
      },
      request: `DELETE /v1/Account/{auth_id}/IncomingCarrier/${id}/ 409`,
    });
    expect(await stored(id)).toMatchObject({ carrier_id: id, name: 'Held', ip_set: '127.0.0.1' });
  });

  it("gets 404 for another account's carrier on get, modify and delete, and lists none of it", async () => {
    const created = await sdkCall('create_incoming_carrier', {
      name: 'Main Only',
      ip_set: '203.0.113.9',
    });
    const id = created.body.carrier_id as string;
    const before = await stored(id);

    const notFound = () =>
      expect.objectContaining({
        status: 404,
        body: { api_id: expect.any(String), error: `incoming carrier ${id} not found` },
      });
    const got = await sdkCall('get_incoming_carrier', { carrier_id: id }, other);
    expect(got, 'get').toEqual(notFound());
    const changed = await sdkCall(
      'modify_incoming_carrier',
      { carrier_id: id, ip_set: '0.0.0.0/0' },
      other,
    );
    expect(changed, 'modify').toEqual(notFound());
    const deleted = await sdkCall('delete_incoming_carrier', { carrier_id: id }, other);
    expect(deleted, 'delete').toEqual(notFound());
    const listed = await sdkCall('get_incoming_carriers', {}, other);
    expect(listed.status).toBe(200);
    expect(listed.body.meta.total_count).toBe(0);
    expect(listed.body.objects).toEqual([]);

    // Nothing of the carrier reached the other account, and nothing of it changed.
    for (const answer of [got, changed, deleted, listed]) {
      expect(JSON.stringify(answer.body)).not.toMatch(/Main Only|203\.0\.113\.9/);
    }
    expect(await stored(id)).toEqual(before);
  });
});

describe('the same SDK not told of the authority', () => {
  it("refuses the bridge's certificate: the SDK checks it, and the gateway hears nothing", async () => {
    const untrusting = await LegacySdk.start(gw, { trust: false });
    try {
      const from = gw.logs.length;
      // On a failed POST the SDK calls back (500, undefined), keeping the error to itself.
      const answer = await untrusting.call(
        'create_incoming_carrier',
        { name: 'Untrusted', ip_set: '127.0.0.1' },
        gw.main,
      );
      expect(answer).toEqual({ status: 500, body: null });
      expect(requestsSince(from)).toEqual([]);
      expect(untrusting.bridged()).toEqual([]);
    } finally {
      await untrusting.stop();
    }
  });
});

/**
 * The official Python SDK's IncomingCarrier calls: plivo-python 0.11.3 (plivo.py, 2016), the
 * last with them (4.x has none), is not installed here. Its RestAPI takes the base URL, so it
 * reaches voxgate over plain HTTP. Its requests, as its `_request` builds them with
 * `requests`: the path with one trailing slash; POST (create, modify) with a JSON body as
 * json.dumps writes it and `content-type: application/json`; GET and DELETE with what is left
 * of the arguments as a query string and no body or type; carrier_id taken out of the
 * arguments into the path. These are those bytes.
 */
describe('requests shaped as the official Python SDK 0.11.3 sends them', () => {
  const python = async (method: 'GET' | 'POST' | 'DELETE', path: string, json?: string) => {
    const { port } = gw.gateway.app.server.address() as AddressInfo;
    const auth = Buffer.from(`${gw.main.id}:${gw.main.token}`).toString('base64');
    const from = gw.logs.length;
    const response = await fetch(`http://127.0.0.1:${port}${base}/${path}`, {
      method,
      headers: {
        authorization: `Basic ${auth}`,
        'user-agent': 'PythonPlivo',
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(json === undefined ? {} : { body: json }),
    });
    const text = await response.text();
    await until(() => requestsSince(from).length > 0, 5_000);
    expect(requestsSince(from)).toHaveLength(1);
    return {
      status: response.status,
      body: text === '' ? null : JSON.parse(text),
      request: requestsSince(from)[0]!,
    };
  };

  it('creates, reads, lists, changes and deletes a carrier, and gets 400 for a bad CIDR', async () => {
    const created = await python(
      'POST',
      'IncomingCarrier/',
      '{"name": "Py Carrier", "ip_set": "127.0.0.1, 192.0.2.0/24"}',
    );
    expect(created).toEqual({
      status: 201,
      body: { api_id: expect.any(String), message: 'created', carrier_id: expect.any(String) },
      request: 'POST /v1/Account/{auth_id}/IncomingCarrier/ 201',
    });
    const id = created.body.carrier_id as string;
    const carrier = {
      carrier_id: id,
      name: 'Py Carrier',
      ip_set: '127.0.0.1,192.0.2.0/24',
      voice: true,
      sms: false,
      resource_uri: `${base}/IncomingCarrier/${id}/`,
    };
    expect(await stored(id)).toEqual(carrier);
    expect(await python('GET', `IncomingCarrier/${id}/`)).toEqual({
      status: 200,
      body: { api_id: expect.any(String), ...carrier },
      request: `GET /v1/Account/{auth_id}/IncomingCarrier/${id}/ 200`,
    });
    const listed = await python('GET', 'IncomingCarrier/?limit=5&offset=0');
    expect(listed.request).toBe('GET /v1/Account/{auth_id}/IncomingCarrier/?limit=5&offset=0 200');
    expect(listed.body.meta).toMatchObject({ limit: 5, offset: 0 });
    expect(listed.body.objects).toContainEqual(carrier);

    expect(await python('POST', `IncomingCarrier/${id}/`, '{"name": "Py Carrier (EU)"}')).toEqual({
      status: 200,
      body: { api_id: expect.any(String), message: 'changed' },
      request: `POST /v1/Account/{auth_id}/IncomingCarrier/${id}/ 200`,
    });
    expect(await stored(id)).toEqual({ ...carrier, name: 'Py Carrier (EU)' });

    const bad = await python(
      'POST',
      `IncomingCarrier/${id}/`,
      '{"ip_set": "10.0.0.0/8, 300.1.2.3"}',
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(
      'invalid ip_set: 300.1.2.3 is not an IP address or a CIDR range (like 192.0.2.0/24)',
    );
    expect(await stored(id)).toEqual({ ...carrier, name: 'Py Carrier (EU)' });

    expect(await python('DELETE', `IncomingCarrier/${id}/`)).toEqual({
      status: 204,
      body: null,
      request: `DELETE /v1/Account/{auth_id}/IncomingCarrier/${id}/ 204`,
    });
    expect(await stored(id)).toBe(404);
  });
});
