import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import {
  ClientApp,
  expectValidSignatures,
  paramsBySequence,
  paramsOf,
} from '../../support/client-app.js';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';
import { until } from '../../support/wait.js';

const US = '14155550100';
const US_OTHER = '14155550111';
const UK = '447400123456';

describeEachStore('messages without a carrier', (target) => {
  let gw: TestGateway;
  let client: ClientApp;
  let base: string;
  beforeAll(async () => {
    client = await ClientApp.start();
  });
  afterAll(async () => {
    await client.close();
  });
  beforeEach(async () => {
    await target.flush();
    client.reset();
    gw = await startGateway({ redisUrl: target.redisUrl() });
    base = `/v1/Account/${gw.main.id}`;
    const added = await gw.request('POST', `${base}/Number/`, {
      json: { numbers: US, carrier: 'c', region: 'r' },
    });
    expect(added.status).toBe(201);
  });
  afterEach(async () => {
    await gw.close();
  });

  const send = (body: Record<string, unknown>) =>
    gw.request('POST', `${base}/Message/`, { json: body });
  const count = async () => (await gw.request('GET', `${base}/Message/`)).body.meta.total_count;

  it('answers 202 with one uuid per valid destination and names the invalid ones', async () => {
    const res = await send({ src: `+${US}`, dst: `${UK}<+1 (415) 555-0111<12345`, text: 'hi' });
    expect(res.status).toBe(202);
    expect(res.body.message).toBe('message(s) queued');
    expect(res.body.message_uuid).toHaveLength(2);
    for (const uuid of res.body.message_uuid) expect(uuid).toMatch(UUID);
    expect(res.body.invalid_number).toEqual(['12345']);
    const record = await gw.request('GET', `${base}/Message/${res.body.message_uuid[1]}/`);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({
      message_uuid: res.body.message_uuid[1],
      message_direction: 'outbound',
      message_type: 'sms',
      from_number: US,
      to_number: US_OTHER,
      units: 1,
      total_rate: '0.00500',
      total_amount: '0.00500',
      carrier_fees_rate: '0.00300',
      destination_country_iso2: 'US',
      is_domestic: true,
      log: 'true',
      resource_uri: `${base}/Message/${res.body.message_uuid[1]}/`,
    });
    expect(record.body.message_time).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00:00$/);
  });

  it('refuses bad requests with a specific error and stores nothing', async () => {
    const cases: [Record<string, unknown>, number, string | RegExp][] = [
      [{ dst: UK, text: 'x' }, 422, 'missing required parameter: src'],
      [{ src: US, text: 'x' }, 422, 'missing required parameter: dst'],
      [{ src: US, dst: UK }, 422, 'missing required parameter: text'],
      [
        { src: '14155550199', dst: UK, text: 'x' },
        400,
        'src 14155550199 is not a number of this account',
      ],
      [
        { src: 'TOO-LONG-SENDER-ID', dst: UK, text: 'x' },
        400,
        /^src TOO-LONG-SENDER-ID is not a valid sender/,
      ],
      [{ src: US, dst: 'abc<12', text: 'x' }, 400, 'dst: abc, 12 is not a valid E.164 number'],
      [
        { src: US, dst: UK, text: 'x'.repeat(1601) },
        400,
        'text is too long: at most 1,600 GSM characters (got 1,601)',
      ],
      [
        { src: US, dst: UK, text: 'ж'.repeat(738) },
        400,
        'text is too long: at most 737 UCS-2 units (got 738)',
      ],
      [
        { src: US, dst: UK, text: 'x', message_expiry: 4 },
        400,
        /^message_expiry must be a whole number of seconds from 5 to 10,799/,
      ],
      [
        { src: US, dst: UK, text: 'x', log: 'maybe' },
        400,
        'log must be one of true, false, content_only or number_only',
      ],
      [{ src: US, dst: UK, text: 'x', method: 'PUT' }, 400, 'method must be GET or POST'],
      [{ src: US, dst: UK, text: 'x', url: 'ftp://x' }, 400, 'url must be an http or https URL'],
      [
        { src: US, dst: UK, text: 'x', powerpack_uuid: 'p' },
        400,
        'src and powerpack_uuid cannot both be given: use one of them',
      ],
      [
        { src: US, dst: Array(1001).fill(UK).join('<'), text: 'x' },
        400,
        'dst holds 1001 destinations: at most 1,000',
      ],
    ];
    for (const [body, status, error] of cases) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(res.body.error).toEqual(
        typeof error === 'string' ? error : expect.stringMatching(error),
      );
      expect(res.body.api_id).toBeTruthy();
    }
    expect(await count()).toBe(0);
  });

  it('accepts a short code and an alphanumeric sender id', async () => {
    expect((await send({ src: '55512', dst: UK, text: 'x' })).status).toBe(202);
    expect((await send({ src: 'VoxGate1', dst: UK, text: 'x' })).status).toBe(202);
    expect(await count()).toBe(2);
  });

  it('fails a message no carrier routes with 90, with queued then failed callbacks in sequence', async () => {
    const url = `${client.baseUrl}/status`;
    const res = await send({ src: US, dst: UK, text: 'hello', url });
    const [uuid] = res.body.message_uuid;
    const callbacks = await client.waitForRequests(2);
    const params = paramsBySequence(callbacks);
    expect(params.map((p) => [p.Status, p.Sequence])).toEqual([
      ['queued', '1'],
      ['failed', '2'],
    ]);
    expect(params[1]).toMatchObject({
      MessageUUID: uuid,
      ParentMessageUUID: uuid,
      From: US,
      To: UK,
      Type: 'sms',
      Units: '1',
      TotalRate: '0.03500',
      TotalAmount: '0.03500',
      ErrorCode: '90',
    });
    expect(params[1]!.MessageTime).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);
    const account = await gw.gateway.state.accounts.get(gw.main.id, gw.main.id);
    expectValidSignatures(callbacks[1]!, {
      accountToken: account!.auth_token,
      mainToken: account!.auth_token,
    });
    const record = await gw.request('GET', `${base}/Message/${uuid}/`);
    expect(record.body).toMatchObject({ message_state: 'failed', error_code: '90' });
  });

  it('masks the number and redacts the text as log asks, in records and log lines', async () => {
    const res = await send({ src: US, dst: UK, text: 'my secret code 1234', log: 'false' });
    const record = await gw.request('GET', `${base}/Message/${res.body.message_uuid[0]}/`);
    expect(record.body.to_number).toBe('447400123xxx');
    expect(record.body.log).toBe('false');
    const stored = await gw.gateway.state.messages.get(gw.main.id, res.body.message_uuid[0]);
    expect(stored!.text).toBe('redacted');
    await until(async () => (await gw.gateway.state.outbox.all(gw.main.id)).length === 0);
    expect(gw.logs.join('\n')).not.toContain('447400123456');
    expect(gw.logs.join('\n')).not.toContain('my secret code');
  });

  it('lists with filters and time windows, and refuses a window over 30 days', async () => {
    await send({ src: US, dst: `${UK}<${US_OTHER}`, text: 'x' });
    const all = await gw.request('GET', `${base}/Message/?limit=1`);
    expect(all.body.meta).toMatchObject({ total_count: 2, limit: 1 });
    const uk = await gw.request('GET', `${base}/Message/?destination_country_iso2=GB`);
    expect(uk.body.objects.map((m: { to_number: string }) => m.to_number)).toEqual([UK]);
    const sms = await gw.request(
      'GET',
      `${base}/Message/?message_type=sms&message_direction=outbound`,
    );
    expect(sms.body.meta.total_count).toBe(2);
    const old = await gw.request('GET', `${base}/Message/?message_time__lt=2020-01-01 00:00:00`);
    expect(old.body.meta.total_count).toBe(0);
    const wide = await gw.request(
      'GET',
      `${base}/Message/?message_time__gt=2020-01-01 00:00&message_time__lt=2020-03-01 00:00`,
    );
    expect(wide.status).toBe(400);
    expect(wide.body.error).toBe('invalid message_time: must be a range of at most 30 days');
    const bad = await gw.request('GET', `${base}/Message/?message_state=lost`);
    expect(bad.status).toBe(400);
  });

  it('hides another account’s messages: 404 and not listed', async () => {
    const res = await send({ src: US, dst: UK, text: 'x' });
    const sub = await gw.subaccount();
    const get = await gw.request(
      'GET',
      `/v1/Account/${sub.id}/Message/${res.body.message_uuid[0]}/`,
      {
        as: sub,
      },
    );
    expect(get.status).toBe(404);
    const list = await gw.request('GET', `/v1/Account/${sub.id}/Message/`, { as: sub });
    expect(list.body.meta.total_count).toBe(0);
    // A subaccount cannot send from the main account's number.
    const from = await gw.request('POST', `/v1/Account/${sub.id}/Message/`, {
      as: sub,
      json: { src: US, dst: UK, text: 'x' },
    });
    expect(from.status).toBe(400);
  });

  it('routes an inbound message to message_url, replies with <Message>, and records STOP', async () => {
    const app = await gw.request('POST', `${base}/Application/`, {
      json: {
        app_name: 'sms',
        answer_url: `${client.baseUrl}/answer`,
        message_url: `${client.baseUrl}/incoming`,
      },
    });
    expect(app.status).toBe(201);
    await gw.request('POST', `${base}/Number/${US}/`, { json: { app_id: app.body.app_id } });
    client.serve('/incoming', {
      body: '<Response><Message src="14155550100" dst="447400123456">Thanks!</Message></Response>',
      contentType: 'application/xml',
    });
    const { inbound } = gw.gateway.messaging;
    await inbound.receive({ carrier: 'c', from: UK, to: US, text: 'hello there', units: 1 });
    const [request] = await client.waitForRequests(1);
    expect(paramsOf(request!)).toMatchObject({
      From: UK,
      To: US,
      Type: 'sms',
      Text: 'hello there',
      Units: '1',
      MessageIntent: '',
    });
    const inboundUuid = paramsOf(request!).MessageUUID!;
    await until(async () => (await count()) === 2);
    await until(async () => {
      const record = await gw.request('GET', `${base}/Message/${inboundUuid}/`);
      return record.body.message_state === 'delivered';
    });
    const replies = await gw.request('GET', `${base}/Message/?message_direction=outbound`);
    expect(replies.body.objects[0]).toMatchObject({ from_number: US, to_number: UK });

    await inbound.receive({ carrier: 'c', from: UK, to: US, text: ' Stop ', units: 1 });
    await client.waitForRequests(2);
    expect(paramsOf(client.received[1]!).MessageIntent).toBe('optout');
    const blocked = await send({ src: US, dst: UK, text: 'more news' });
    await until(async () => {
      const r = await gw.request('GET', `${base}/Message/${blocked.body.message_uuid[0]}/`);
      return r.body.message_state === 'failed';
    });
    const record = await gw.request('GET', `${base}/Message/${blocked.body.message_uuid[0]}/`);
    expect(record.body.error_code).toBe('200');
    await inbound.receive({ carrier: 'c', from: UK, to: US, text: 'START', units: 1 });
    await until(async () => (await gw.gateway.state.optOuts.all(gw.main.id)).length === 0);
  });

  it('acknowledges an inbound message to a number nobody holds without recording it', async () => {
    await gw.gateway.messaging.inbound.receive({
      carrier: 'c',
      from: UK,
      to: '14155550177',
      text: 'x',
      units: 1,
    });
    expect(await count()).toBe(0);
    expect(gw.logs.join('\n')).toContain('inbound message to a number nobody holds');
  });
});
