import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { officialSdk } from '../../support/official-sdk.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { StreamServer } from '../../support/stream-server.js';
import { until } from '../../support/wait.js';

/**
 * Every request the official Node SDK (npm `plivo`, the pinned version) sends for the
 * resources voxgate implements, each asked of a real gateway over HTTP: the exact method and
 * path shape the SDK built (trailing slashes, `//`, query strings of list filters) as the
 * gateway's request log shows it, and the answer the SDK handed back.
 */
const NUMBER = '14155550141';

let gw: TestGateway;
let smsc: SmscSimulator;
let app: ClientApp;
let bot: StreamServer;
let callee: SippUas;
let media: RtpPeer;
// The SDK's typings leave most answers `any`; the assertions below say what they hold.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let sdk: any;
let account: string;

beforeAll(async () => {
  smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
  gw = await startGateway({ listen: true, env: { VOXGATE_SMPP_URL: smsc.url('enquire_link=1') } });
  app = await ClientApp.start();
  bot = await StreamServer.start();
  media = await RtpPeer.open();
  callee = await startSippUas({
    scenario: 'carrier-answer.xml',
    variables: { rtp_port: String(media.port) },
  });
  sdk = officialSdk(gw);
  account = `/v1/Account/${gw.main.id}`;
  await smsc.waitForBind();
});

afterAll(async () => {
  await gw?.request('DELETE', `/v1/Account/${gw.main.id}/Call/`);
  await callee?.stop();
  await media?.close();
  await gw?.close();
  await smsc?.stop();
  await app?.close();
  await bot?.close();
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
      return `${req.method} ${req.url} ${res.statusCode}`;
    });
}

/** Runs one SDK call and returns its answer with the one request the gateway saw for it. */
async function sent(
  call: () => Promise<unknown>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ answer: any; request: string }> {
  const from = gw.logs.length;
  const answer = await call();
  await until(() => requestsSince(from).length > 0, 5_000);
  const requests = requestsSince(from);
  expect(requests).toHaveLength(1);
  return { answer, request: requests[0]!.replace(gw.main.id, '{auth_id}') };
}

describe('the official Node SDK, request by request', () => {
  it('accounts: get and update the account at /v1/Account/{id}// (the SDK doubles the slash)', async () => {
    const got = await sent(() => sdk.accounts.get());
    expect(got.request).toBe('GET /v1/Account/{auth_id}// 200');
    expect(got.answer).toMatchObject({
      accountType: 'standard',
      name: 'main',
      resourceUri: `${account}/`,
    });

    const updated = await sent(() => sdk.accounts.update({ name: 'Acme Voice', city: 'Lyon' }));
    expect(updated.request).toBe('POST /v1/Account/{auth_id}// 200');
    expect((await sdk.accounts.get()).name).toBe('Acme Voice');
  });

  it('subaccounts: create, get, list with limit and offset, update, delete', async () => {
    const created = await sent(() => sdk.subaccounts.create('support', true));
    expect(created.request).toBe('POST /v1/Account/{auth_id}/Subaccount/ 201');
    const id = created.answer.authId as string;
    expect(id).toMatch(/^SA/);

    const got = await sent(() => sdk.subaccounts.get(id));
    expect(got.request).toBe(`GET /v1/Account/{auth_id}/Subaccount/${id}/ 200`);
    expect(got.answer).toMatchObject({ authId: id, name: 'support', enabled: true });

    const listed = await sent(() => sdk.subaccounts.list({ limit: 5, offset: 0 }));
    expect(listed.request).toBe('GET /v1/Account/{auth_id}/Subaccount/?limit=5&offset=0 200');
    expect(listed.answer.map((s: { authId: string }) => s.authId)).toEqual([id]);

    const updated = await sent(() => sdk.subaccounts.update(id, 'support desk', false));
    expect(updated.request).toBe(`POST /v1/Account/{auth_id}/Subaccount/${id}/ 200`);
    expect((await sdk.subaccounts.get(id)).enabled).toBe(false);

    const deleted = await sent(() => sdk.subaccounts.delete(id, true));
    expect(deleted.request).toBe(`DELETE /v1/Account/{auth_id}/Subaccount/${id}/ 204`);
    await expect(sdk.subaccounts.get(id)).rejects.toThrow();
  });

  it('applications: create, get, list, update, delete', async () => {
    const created = await sent(() =>
      sdk.applications.create('front desk', { answerUrl: `${app.baseUrl}/answer` }),
    );
    expect(created.request).toBe('POST /v1/Account/{auth_id}/Application/ 201');
    const id = created.answer.appId as string;

    const got = await sent(() => sdk.applications.get(id));
    expect(got.request).toBe(`GET /v1/Account/{auth_id}/Application/${id}/ 200`);
    expect(got.answer).toMatchObject({ appName: 'front desk', answerUrl: `${app.baseUrl}/answer` });

    const listed = await sent(() => sdk.applications.list({ limit: 10, offset: 0 }));
    expect(listed.request).toBe('GET /v1/Account/{auth_id}/Application/?limit=10&offset=0 200');
    expect(listed.answer.map((a: { appId: string }) => a.appId)).toContain(id);

    const updated = await sent(() => sdk.applications.update(id, { answerMethod: 'GET' }));
    expect(updated.request).toBe(`POST /v1/Account/{auth_id}/Application/${id}/ 200`);
    expect((await sdk.applications.get(id)).answerMethod).toBe('GET');

    const deleted = await sent(() => sdk.applications.delete(id));
    expect(deleted.request).toBe(`DELETE /v1/Account/{auth_id}/Application/${id}/ 204`);
    await expect(sdk.applications.get(id)).rejects.toThrow();
  });

  it('endpoints: create, get, list, update, delete', async () => {
    const created = await sent(() => sdk.endpoints.create('desk01', 'S3cret-pass', 'Desk_1', null));
    expect(created.request).toBe('POST /v1/Account/{auth_id}/Endpoint/ 201');
    const id = created.answer.endpointId as string;

    const got = await sent(() => sdk.endpoints.get(id));
    expect(got.request).toBe(`GET /v1/Account/{auth_id}/Endpoint/${id}/ 200`);
    expect(got.answer.alias).toBe('Desk_1');
    expect(got.answer.username).toMatch(/^desk01/);

    const listed = await sent(() => sdk.endpoints.list({ limit: 20, offset: 0 }));
    expect(listed.request).toBe('GET /v1/Account/{auth_id}/Endpoint/?limit=20&offset=0 200');
    expect(listed.answer).toHaveLength(1);

    const updated = await sent(() => sdk.endpoints.update(id, { alias: 'Front_desk' }));
    expect(updated.request).toBe(`POST /v1/Account/{auth_id}/Endpoint/${id}/ 200`);
    expect((await sdk.endpoints.get(id)).alias).toBe('Front_desk');

    const deleted = await sent(() => sdk.endpoints.delete(id));
    expect(deleted.request).toBe(`DELETE /v1/Account/{auth_id}/Endpoint/${id}/ 204`);
  });

  it('numbers: add own numbers, list with filters, get, update, unrent', async () => {
    const added = await sent(() =>
      sdk.numbers.addOwnNumber(`${NUMBER},14155550142`, 'carrier', 'region', {}),
    );
    expect(added.request).toBe('POST /v1/Account/{auth_id}/Number/ 201');

    const listed = await sent(() =>
      sdk.numbers.list({ limit: 5, offset: 0, numberStartswith: '1415' }),
    );
    expect(listed.request).toBe(
      'GET /v1/Account/{auth_id}/Number/?limit=5&offset=0&number_startswith=1415 200',
    );
    expect(listed.answer.map((n: { number: string }) => n.number).sort()).toEqual([
      NUMBER,
      '14155550142',
    ]);

    const got = await sent(() => sdk.numbers.get(NUMBER));
    expect(got.request).toBe(`GET /v1/Account/{auth_id}/Number/${NUMBER}/ 200`);
    expect(got.answer.number).toBe(NUMBER);

    const updated = await sent(() => sdk.numbers.update(NUMBER, { alias: 'main line' }));
    expect(updated.request).toBe(`POST /v1/Account/{auth_id}/Number/${NUMBER}/ 200`);
    expect((await sdk.numbers.get(NUMBER)).alias).toBe('main line');

    const unrented = await sent(() => sdk.numbers.unrent('14155550142'));
    expect(unrented.request).toBe('DELETE /v1/Account/{auth_id}/Number/14155550142/ 204');
  });

  it('messages: send, get, list with filters, list media', async () => {
    const created = await sent(() =>
      sdk.messages.create(NUMBER, '447400123456', 'hello', { url: `${app.baseUrl}/status` }),
    );
    expect(created.request).toBe('POST /v1/Account/{auth_id}/Message/ 202');
    const [uuid] = created.answer.messageUuid as string[];
    await until(() => app.requestsTo('/status').some((r) => r.params.Status === 'delivered'));

    const got = await sent(() => sdk.messages.get(uuid));
    expect(got.request).toBe(`GET /v1/Account/{auth_id}/Message/${uuid}/ 200`);
    expect(got.answer).toMatchObject({ messageUuid: uuid, messageState: 'delivered' });

    const since = new Date(Date.now() - 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    const listed = await sent(() =>
      sdk.messages.list({
        limit: 5,
        offset: 0,
        message_direction: 'outbound',
        message_time__gt: since,
      }),
    );
    expect(listed.request).toBe(
      `GET /v1/Account/{auth_id}/Message/?limit=5&offset=0&message_direction=outbound&message_time__gt=${encodeURIComponent(since)} 200`,
    );
    expect(listed.answer.map((m: { messageUuid: string }) => m.messageUuid)).toEqual([uuid]);

    const mediaList = await sent(() => sdk.messages.listMedia(uuid));
    expect(mediaList.request).toBe(`GET /v1/Account/{auth_id}/Message/${uuid}/Media/ 200`);
  });

  it('calls: place, list and get live calls, speak, digits, streams, hang up, list and get records', async () => {
    app.serve('/answer', {
      body: '<Response><Wait length="30"/></Response>',
    });
    const created = await sent(() =>
      sdk.calls.create(NUMBER, `sip:alice@127.0.0.1:${callee.port}`, `${app.baseUrl}/answer`, {
        answerMethod: 'POST',
      }),
    );
    expect(created.request).toBe('POST /v1/Account/{auth_id}/Call/ 201');
    await until(() => app.requestsTo('/answer').length === 1, 15_000);
    const uuid = app.requestsTo('/answer')[0]!.params.CallUUID!;

    const live = await sent(() => sdk.calls.listLiveCalls({}));
    expect(live.request).toBe('GET /v1/Account/{auth_id}/Call/?status=live 200');
    expect(live.answer.map((c: { callUuid: string }) => c.callUuid)).toEqual([uuid]);

    const liveCall = await sent(() => sdk.calls.getLiveCall(uuid));
    expect(liveCall.request).toBe(`GET /v1/Account/{auth_id}/Call/${uuid}?status=live 200`);
    expect(liveCall.answer).toMatchObject({ callUuid: uuid, callStatus: 'in-progress' });

    const speak = await sent(() => sdk.calls.speakText(uuid, 'one moment please', {}));
    expect(speak.request).toBe(`POST /v1/Account/{auth_id}/Call/${uuid}/Speak/ 200`);
    const stopSpeak = await sent(() => sdk.calls.stopSpeakingText(uuid));
    expect(stopSpeak.request).toBe(`DELETE /v1/Account/{auth_id}/Call/${uuid}/Speak/ 200`);
    const digits = await sent(() => sdk.calls.sendDigits(uuid, '123', {}));
    expect(digits.request).toBe(`POST /v1/Account/{auth_id}/Call/${uuid}/DTMF/ 200`);

    const stream = await sent(() => sdk.calls.stream(uuid, bot.url, {}));
    expect(stream.request).toBe(`POST /v1/Account/{auth_id}/Call/${uuid}/Stream/ 201`);
    await bot.connection(0);
    const streamId = stream.answer.streamId as string;
    const oneStream = await sent(() => sdk.calls.getStream(uuid, streamId));
    expect(oneStream.request).toBe(`GET /v1/Account/{auth_id}/Call/${uuid}/Stream/${streamId} 200`);
    const streams = await sent(() => sdk.calls.getAllStream(uuid));
    expect(streams.request).toBe(`GET /v1/Account/{auth_id}/Call/${uuid}/Stream/ 200`);
    const stopped = await sent(() => sdk.calls.stopStream(uuid, streamId));
    expect(stopped.request).toBe(
      `DELETE /v1/Account/{auth_id}/Call/${uuid}/Stream/${streamId} 204`,
    );

    const hungUp = await sent(() => sdk.calls.hangup(uuid));
    expect(hungUp.request).toBe(`DELETE /v1/Account/{auth_id}/Call/${uuid}/ 204`);
    await until(() => gw.gateway.calls.liveCount === 0, 10_000);

    const since = new Date(Date.now() - 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    const records = await sent(() =>
      sdk.calls.list({ limit: 5, offset: 0, call_direction: 'outbound', end_time__gt: since }),
    );
    expect(records.request).toBe(
      `GET /v1/Account/{auth_id}/Call/?limit=5&offset=0&call_direction=outbound&end_time__gt=${encodeURIComponent(since)} 200`,
    );
    expect(records.answer.map((c: { callUuid: string }) => c.callUuid)).toEqual([uuid]);
    const record = await sent(() => sdk.calls.get(uuid));
    expect(record.request).toBe(`GET /v1/Account/{auth_id}/Call/${uuid}/ 200`);
    expect(record.answer).toMatchObject({ callUuid: uuid, callDirection: 'outbound' });

    const cancel = await sent(() =>
      sdk.calls.cancel('0c1d2e3f-0000-4000-8000-000000000000').catch((e: Error) => e),
    );
    expect(cancel.request).toBe(
      'DELETE /v1/Account/{auth_id}/Request/0c1d2e3f-0000-4000-8000-000000000000/ 404',
    );
  });

  it('tokens: create an access token', async () => {
    const created = await sent(() =>
      sdk.token.create(gw.main.id, { sub: 'desk01', incoming_allow: true }),
    );
    expect(created.request).toBe('POST /v1/Account/{auth_id}/JWT/Token/ 200');
    expect(created.answer.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });
});

/**
 * The official Python SDK (plivo-python, plivo/rest/client.py) is not installed here; its
 * requests are built by `requests` from '/'.join([base, auth_id, *path]) + '/': one trailing
 * slash, JSON bodies on POST and DELETE (`{}` when no argument is given), and list filters
 * as a query string encoded with `+` for a space. These are those bytes, over HTTP.
 */
describe('requests shaped as the official Python SDK sends them', () => {
  const python = async (method: string, path: string, json?: unknown) => {
    const { port } = gw.gateway.app.server.address() as AddressInfo;
    const auth = Buffer.from(`${gw.main.id}:${gw.main.token}`).toString('base64');
    const response = await fetch(`http://127.0.0.1:${port}/v1/Account/${gw.main.id}/${path}`, {
      method,
      headers: {
        authorization: `Basic ${auth}`,
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text) };
  };

  it('account get, subaccount create/list/delete, application delete with a JSON body, filters with +', async () => {
    expect(await python('GET', '')).toMatchObject({ status: 200, body: { auth_id: gw.main.id } });

    const created = await python('POST', 'Subaccount/', { name: 'py', enabled: true });
    expect(created.status).toBe(201);
    const listed = await python('GET', 'Subaccount/?limit=20&offset=0');
    expect(listed.body.objects.map((s: { auth_id: string }) => s.auth_id)).toContain(
      created.body.auth_id,
    );
    const sub = await python('DELETE', `Subaccount/${created.body.auth_id}/`, { cascade: true });
    expect(sub.status).toBe(204);

    const application = await python('POST', 'Application/', {
      app_name: 'py app',
      answer_url: `${app.baseUrl}/answer`,
    });
    expect(application.status).toBe(201);
    expect((await python('DELETE', `Application/${application.body.app_id}/`, {})).status).toBe(
      204,
    );
    expect((await python('GET', `Application/${application.body.app_id}/`)).status).toBe(404);

    const since = new Date(Date.now() - 3_600_000).toISOString().slice(0, 19).replace('T', '+');
    const calls = await python(
      'GET',
      `Call/?limit=5&offset=0&end_time__gt=${since.replaceAll(':', '%3A')}`,
    );
    expect(calls.status).toBe(200);
    expect(calls.body.meta).toMatchObject({ limit: 5, offset: 0 });
  });
});
