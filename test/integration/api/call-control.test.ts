import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { muLawDecode } from '../../../src/media/codec/g711.js';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, UUID, type Credentials, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Calls in progress through the REST API, on real calls: the gateway dials SIPp (the carrier),
 * whose audio goes to an RTP socket of the test, while the customer's answer XML keeps the call
 * up with a Wait.
 */
let gw: TestGateway;
let app: ClientApp;
let sub: Credentials;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
  sub = await gw.subaccount('other');
});

afterEach(async () => {
  // Whatever a test left up ends before its carrier goes.
  await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/`);
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await gw.close();
  await app.close();
});

const v1 = () => `/v1/Account/${gw.main.id}`;

interface LiveCall {
  uuid: string;
  requestUuid: string;
  media: RtpPeer;
  uas: SippUas;
}

/** Places a call the carrier answers and the answer XML holds up; resolves once answered. */
async function liveCall(waitSeconds = 20, scenario?: string): Promise<LiveCall> {
  const placed = await placeCarrierCall(
    { gw, app, carriers, peers },
    `<Response><Wait length="${waitSeconds}"/></Response>`,
    { caller_name: 'Test Line', hangup_url: `${app.baseUrl}/hangup` },
    scenario,
  );
  return { uuid: await answeredCallUuid(app, placed.requestUuid), ...placed };
}

/**
 * DELETE `path` ending a call whose far end never answers the BYE: 204, in well under the 32 s
 * the BYE is retransmitted for, which is what waiting for its answer took.
 */
async function deletedAtOnce(path: string): Promise<void> {
  const asked = Date.now();
  expect((await gw.request('DELETE', path)).status).toBe(204);
  expect(Date.now() - asked).toBeLessThan(10_000);
}

async function hangupOf(uuid: string) {
  await until(() => app.requestsTo('/hangup').some((r) => r.params.CallUUID === uuid), 15_000);
  return app.requestsTo('/hangup').find((r) => r.params.CallUUID === uuid)!;
}

async function recordOf(uuid: string) {
  let record;
  await until(async () => {
    record = await gw.gateway.state.calls.get(gw.main.id, uuid);
    return record !== null;
  }, 10_000);
  return record!;
}

/** The PCMU audio the far end has received since packet `mark`, decoded. */
const pcmuHeard = (media: RtpPeer, mark: number): Int16Array =>
  muLawDecode(
    Buffer.concat(
      media.received
        .slice(mark)
        .filter((p) => p.payloadType === 0)
        .map((p) => p.payload),
    ),
  );

const rms = (pcm: Int16Array) =>
  Math.sqrt(pcm.reduce((s, v) => s + v * v, 0) / Math.max(1, pcm.length));

/** RFC 4733 2.3: the event code is the first byte of a telephone-event payload. */
const EVENT_DIGITS = '0123456789*#ABCD';

describe('live calls', () => {
  it('lists a live call, retrieves its live object, and hides it from other accounts', async () => {
    const call = await liveCall();
    expect(call.uuid).toMatch(UUID);

    const live = await gw.request('GET', `${v1()}/Call/?status=live`);
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ api_id: expect.any(String), calls: [call.uuid] });
    const queued = await gw.request('GET', `${v1()}/Call?status=queued`);
    expect(queued.body).toEqual({ api_id: expect.any(String), calls: [] });
    const filtered = await gw.request('GET', `${v1()}/Call/?status=live&call_direction=inbound`);
    expect(filtered.body.calls).toEqual([]);
    // Its from is +14155550100: found with or without the +, not by other digits.
    const byNumber = async (from: string) =>
      (await gw.request('GET', `${v1()}/Call/?status=live&from_number=${from}`)).body.calls;
    expect(await byNumber('14155550100')).toEqual([call.uuid]);
    expect(await byNumber('%2B14155550100')).toEqual([call.uuid]);
    expect(await byNumber('14155550199')).toEqual([]);

    const one = await gw.request('GET', `${v1()}/Call/${call.uuid}?status=live`);
    expect(one.status).toBe(200);
    const object = {
      call_uuid: call.uuid,
      direction: 'outbound',
      from: '+14155550100',
      to: `sip:alice@127.0.0.1:${call.uas.port}`,
      caller_name: 'Test Line',
      call_status: 'in-progress',
      session_start: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      request_uuid: call.requestUuid,
      stir_attestation: '',
      stir_verification: 'Not Applicable',
    };
    expect(one.body).toEqual({ api_id: expect.any(String), ...object });
    const since = Date.now() - Date.parse(`${one.body.session_start.replace(' ', 'T')}Z`);
    expect(since).toBeGreaterThanOrEqual(0);
    expect(since).toBeLessThan(20_000);
    // It is live, not queued.
    expect((await gw.request('GET', `${v1()}/Call/${call.uuid}/?status=queued`)).status).toBe(404);

    const v2 = await gw.request('GET', `/v2/Account/${gw.main.id}/Call/`);
    expect(v2.status).toBe(200);
    expect(v2.body).toEqual({
      api_id: expect.any(String),
      meta: { limit: 20, offset: 0, total_count: 1, next: null, previous: null },
      objects: [object],
    });
    // /v2 is authenticated exactly as /v1.
    expect((await gw.request('GET', `/v2/Account/${gw.main.id}/Call/`, { as: null })).status).toBe(
      401,
    );
    const wrongToken = { id: gw.main.id, token: 'x'.repeat(40) };
    expect(
      (await gw.request('GET', `/v2/Account/${gw.main.id}/Call/`, { as: wrongToken })).status,
    ).toBe(401);
    expect((await gw.request('GET', `/v2/Account/${gw.main.id}/Call/`, { as: sub })).status).toBe(
      401,
    );

    // Another account (a subaccount of the same main account) does not see it at all.
    const base = `/v1/Account/${sub.id}/Call/${call.uuid}`;
    const asSub = { as: sub };
    expect((await gw.request('GET', `${base}/?status=live`, asSub)).status).toBe(404);
    expect(
      (await gw.request('GET', `/v1/Account/${sub.id}/Call/?status=live`, asSub)).body,
    ).toEqual({ api_id: expect.any(String), calls: [] });
    expect((await gw.request('GET', `/v2/Account/${sub.id}/Call/`, asSub)).body.objects).toEqual(
      [],
    );
    for (const [method, path, json] of [
      ['DELETE', `${base}/`, undefined],
      ['POST', `${base}/Speak/`, { text: 'hello' }],
      ['DELETE', `${base}/Speak/`, undefined],
      ['POST', `${base}/DTMF/`, { digits: '1' }],
      ['POST', `${base}/Conversion/`, { status: 'sold' }],
      ['DELETE', `/v1/Account/${sub.id}/Request/${call.requestUuid}/`, undefined],
    ] as const) {
      const res = await gw.request(method, path, { ...asSub, json });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    // Its own DELETE Call/ leaves the main account's call up.
    expect((await gw.request('DELETE', `/v1/Account/${sub.id}/Call/`, asSub)).status).toBe(204);
    expect((await gw.request('GET', `${v1()}/Call/?status=live`)).body.calls).toEqual([call.uuid]);
  }, 30_000);

  it('hangs up with DELETE Call/{uuid}/: 204, an API Request hangup, then 404', async () => {
    const call = await liveCall();
    const first = await gw.request('DELETE', `${v1()}/Call/${call.uuid}/`);
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    const hangup = await hangupOf(call.uuid);
    expect(hangup.params).toMatchObject({
      CallStatus: 'completed',
      HangupSource: 'API Request',
      HangupCauseName: 'Normal Hangup',
      HangupCauseCode: '4000',
    });
    const second = await gw.request('DELETE', `${v1()}/Call/${call.uuid}`);
    expect(second.status).toBe(404);
    expect(second.body).toEqual({
      api_id: expect.any(String),
      error: `call ${call.uuid} not found`,
    });
    expect((await gw.request('GET', `${v1()}/Call/${call.uuid}/?status=live`)).status).toBe(404);
    expect((await gw.request('GET', `${v1()}/Call/?status=live`)).body.calls).toEqual([]);
    expect((await gw.request('DELETE', `${v1()}/Call/${randomUUID()}/`)).status).toBe(404);
    expect((await call.uas.stop()).errors).toEqual([]);
  }, 30_000);

  it('answers DELETE Call/{uuid}/ once the call is over here, not when the far end answers the BYE', async () => {
    // A far end that vanished: it never answers the BYE, which the gateway retransmits for 32 s.
    const call = await liveCall(20, 'carrier-answer-silent.xml');
    await deletedAtOnce(`${v1()}/Call/${call.uuid}/`);
    expect((await hangupOf(call.uuid)).params).toMatchObject({
      CallStatus: 'completed',
      HangupSource: 'API Request',
      HangupCauseCode: '4000',
    });
    expect((await recordOf(call.uuid)).hangup_source).toBe('API Request');
    expect((await gw.request('GET', `${v1()}/Call/${call.uuid}/?status=live`)).status).toBe(404);
  }, 30_000);

  it('answers DELETE Request/{uuid}/ once its calls are over here, not when the far end answers', async () => {
    const call = await liveCall(20, 'carrier-answer-silent.xml');
    await deletedAtOnce(`${v1()}/Request/${call.requestUuid}/`);
    expect((await hangupOf(call.uuid)).params).toMatchObject({
      RequestUUID: call.requestUuid,
      CallStatus: 'completed',
      HangupSource: 'API Request',
    });
    // Its one call is over, its BYE still unanswered: nothing of the request is left to end.
    expect((await gw.request('DELETE', `${v1()}/Request/${call.requestUuid}/`)).status).toBe(404);
  }, 30_000);

  it('has written the record when the hangup callback goes out, even on a slow store', async () => {
    const calls = gw.gateway.state.calls;
    const create = calls.create.bind(calls);
    // A store slow to write (a busy Redis): an application that fetches the call from its
    // hangup_url must still find it.
    calls.create = async (record) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await create(record);
    };
    try {
      const call = await liveCall();
      expect((await gw.request('DELETE', `${v1()}/Call/${call.uuid}/`)).status).toBe(204);
      await hangupOf(call.uuid);
      const record = await gw.request('GET', `${v1()}/Call/${call.uuid}/`);
      expect(record.status).toBe(200);
      expect(record.body).toMatchObject({ call_uuid: call.uuid, hangup_source: 'API Request' });
      await call.uas.stop();
    } finally {
      calls.create = create;
    }
  }, 30_000);

  it('refuses speech, digits and a stream on a call that is only ringing (409), and stops nothing', async () => {
    const uas = await startSippUas({ scenario: 'carrier-no-answer.xml' });
    carriers.push(uas);
    const fired = await gw.request('POST', `${v1()}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:ringing@127.0.0.1:${uas.port}`,
        answer_url: `${app.baseUrl}/answer`,
        ring_url: `${app.baseUrl}/ring`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    expect(fired.status).toBe(201);
    await until(() => app.requestsTo('/ring').length > 0, 10_000);
    const uuid = app.requestsTo('/ring')[0]!.params.CallUUID!;
    const notAnswered = {
      api_id: expect.any(String),
      error: `call ${uuid} has no audio yet: it is not answered`,
    };

    const speak = await gw.request('POST', `${v1()}/Call/${uuid}/Speak/`, {
      json: { text: 'Hello' },
    });
    expect(speak.status).toBe(409);
    expect(speak.body).toEqual(notAnswered);
    const dtmf = await gw.request('POST', `${v1()}/Call/${uuid}/DTMF/`, { json: { digits: '12' } });
    expect(dtmf.status).toBe(409);
    expect(dtmf.body).toEqual(notAnswered);
    const stream = await gw.request('POST', `${v1()}/Call/${uuid}/Stream/`, {
      json: { service_url: 'wss://streams.example.com/audio' },
    });
    expect(stream.status).toBe(409);
    expect(stream.body).toEqual(notAnswered);
    expect((await gw.request('GET', `${v1()}/Call/${uuid}/Stream/`)).body.objects).toEqual([]);
    // Stopping speech needs no audio: there is simply nothing to stop.
    expect((await gw.request('DELETE', `${v1()}/Call/${uuid}/Speak/`)).status).toBe(200);
    // The call itself rings on, untouched.
    expect((await gw.request('GET', `${v1()}/Call/${uuid}/?status=live`)).body.call_status).toBe(
      'ringing',
    );
    // Hung up before an answer, the call is cancelled, not ended normally.
    expect((await gw.request('DELETE', `${v1()}/Call/${uuid}/`)).status).toBe(204);
    expect((await hangupOf(uuid)).params).toMatchObject({
      CallStatus: 'no-answer',
      HangupCauseCode: '1000',
      HangupCauseName: 'Canceled',
      HangupSource: 'API Request',
      BillDuration: '0',
    });
    const record = await gw.request('GET', `${v1()}/Call/${uuid}/`);
    expect(record.body).toMatchObject({ hangup_cause_code: 1000, hangup_cause_name: 'Canceled' });
  }, 30_000);

  it('hangs up every call of the account with DELETE Call/', async () => {
    const call = await liveCall();
    const res = await gw.request('DELETE', `${v1()}/Call/`);
    expect(res.status).toBe(204);
    expect((await hangupOf(call.uuid)).params.HangupSource).toBe('API Request');
    // Nothing left: still 204.
    expect((await gw.request('DELETE', `${v1()}/Call`)).status).toBe(204);
  }, 30_000);

  it("ends a request's calls with DELETE Request/{uuid}/, then 404", async () => {
    const call = await liveCall();
    const res = await gw.request('DELETE', `${v1()}/Request/${call.requestUuid}/`);
    expect(res.status).toBe(204);
    // Answered already: hung up, not cancelled.
    expect((await hangupOf(call.uuid)).params).toMatchObject({
      RequestUUID: call.requestUuid,
      HangupSource: 'API Request',
      HangupCauseCode: '4000',
      CallStatus: 'completed',
    });
    await until(
      async () => (await gw.request('GET', `${v1()}/Call/?status=live`)).body.calls.length === 0,
    );
    expect((await gw.request('DELETE', `${v1()}/Request/${call.requestUuid}/`)).status).toBe(404);
    expect((await gw.request('DELETE', `${v1()}/Request/${randomUUID()}`)).status).toBe(404);
  }, 30_000);

  it("stops only the API's speech with DELETE Speak/: the answer XML's own speech goes on", async () => {
    const placed = await placeCarrierCall(
      { gw, app, carriers, peers },
      '<Response><Speak loop="5">Please hold while we find your order in our records.</Speak><Wait length="20"/></Response>',
    );
    const uuid = await answeredCallUuid(app, placed.requestUuid);
    const base = `${v1()}/Call/${uuid}`;
    const energyFrom = (mark: number) => rms(pcmuHeard(placed.media, mark));
    await until(() => energyFrom(0) > 300, 5000, 50);
    const spoken = await gw.request('POST', `${base}/Speak/`, { json: { text: 'One moment.' } });
    expect(spoken.status).toBe(200);
    await sleep(300);
    expect((await gw.request('DELETE', `${base}/Speak/`)).status).toBe(200);
    await sleep(200);
    const mark = placed.media.received.length;
    await sleep(1000);
    // The XML's sentence, five times over, is still being spoken.
    expect(energyFrom(mark)).toBeGreaterThan(300);
  }, 30_000);

  it('speaks into the call, stops, and sends RFC 4733 digits', async () => {
    const call = await liveCall();
    const base = `${v1()}/Call/${call.uuid}`;
    const mark = call.media.received.length;
    const spoken = await gw.request('POST', `${base}/Speak/`, {
      json: { text: 'Your order has shipped and will arrive tomorrow.', language: 'en-GB' },
    });
    expect(spoken.status).toBe(200);
    expect(spoken.body).toEqual({ message: 'speak started', api_id: expect.any(String) });
    const heard = () => pcmuHeard(call.media, mark);
    await until(() => rms(heard()) > 300, 5000, 50);

    const stopped = await gw.request('DELETE', `${base}/Speak/`);
    expect(stopped.status).toBe(200);
    expect(stopped.body).toEqual({ message: 'speak stopped', api_id: expect.any(String) });

    // Form posts carry booleans as "true" and "false".
    const looped = await gw.request('POST', `${base}/Speak/`, {
      form: { text: 'again', voice: 'MAN', loop: 'true', mix: 'false', legs: 'both' },
    });
    expect(looped.status).toBe(200);
    expect((await gw.request('DELETE', `${base}/Speak`)).status).toBe(200);

    const before = call.media.received.length;
    const sent = await gw.request('POST', `${base}/DTMF/`, { json: { digits: '1#' } });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ message: 'digits sent', api_id: expect.any(String) });
    const events = () =>
      call.media.received
        .slice(before)
        .filter((p) => p.payloadType === 101)
        .map((p) => EVENT_DIGITS[p.payload[0]!]);
    await until(() => new Set(events()).size === 2, 5000, 20);
    expect([...new Set(events())]).toEqual(['1', '#']);

    const unknown = `${v1()}/Call/${randomUUID()}`;
    expect((await gw.request('POST', `${unknown}/Speak/`, { json: { text: 'x' } })).status).toBe(
      404,
    );
    expect((await gw.request('DELETE', `${unknown}/Speak/`)).status).toBe(404);
    expect((await gw.request('POST', `${unknown}/DTMF/`, { json: { digits: '1' } })).status).toBe(
      404,
    );
  }, 30_000);

  it('keeps a conversion reported during the call on its record, and updates it after', async () => {
    const call = await liveCall();
    const path = `${v1()}/Call/${call.uuid}/Conversion/`;
    const during = await gw.request('POST', path, {
      form: { timestamp: '2026-11-21 10:00:00', status: 'converted' },
    });
    expect(during.status).toBe(200);
    expect(during.body).toEqual({ message: 'conversion recorded', api_id: expect.any(String) });
    await gw.request('DELETE', `${v1()}/Call/${call.uuid}/`);
    await hangupOf(call.uuid);
    expect((await recordOf(call.uuid)).conversion).toEqual({
      timestamp: '2026-11-21 10:00:00',
      status: 'converted',
    });

    const after = await gw.request('POST', path, { json: { status: 'refunded' } });
    expect(after.status).toBe(200);
    expect((await recordOf(call.uuid)).conversion).toEqual({ timestamp: null, status: 'refunded' });
    // The record itself reads as before.
    const record = await gw.request('GET', `${v1()}/Call/${call.uuid}/`);
    expect(record.status).toBe(200);
    expect(record.body).not.toHaveProperty('conversion');

    const tooLong = await gw.request('POST', path, { json: { status: 'x'.repeat(256) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toBe('invalid status: must be a string of at most 255 characters');
    const unknown = `${v1()}/Call/${randomUUID()}/Conversion/`;
    expect((await gw.request('POST', unknown, { json: { status: 'x' } })).status).toBe(404);
  }, 30_000);
});

describe('Speak and DTMF parameters', () => {
  const call = () => `${v1()}/Call/${randomUUID()}`;
  const languages =
    'arb, cmn-CN, da-DK, nl-NL, en-AU, en-GB, en-US, fr-FR, de-DE, it-IT, ja-JP, pt-BR, pt-PT, ru-RU, es-ES, es-US, en-IN, fr-CA, hi-IN, ko-KR, es-MX';

  it.each([
    [{}, 422, 'missing required parameter: text'],
    [{ voice: 'MAN' }, 422, 'missing required parameter: text'],
    [{ text: '' }, 400, 'invalid text: must be a non-empty string'],
    [{ text: 'hi', voice: 'CHILD' }, 400, 'invalid voice: must be MAN or WOMAN'],
    [{ text: 'hi', language: 'xx-XX' }, 400, `invalid language: must be one of ${languages}`],
    [
      { text: 'hi', voice: 'MAN', language: 'hi-IN' },
      400,
      'invalid voice: must be WOMAN for language hi-IN',
    ],
    [
      { text: 'hi', voice: 'MAN', language: 'arb' },
      400,
      'invalid voice: must be WOMAN for language arb',
    ],
    [{ text: 'hi', legs: 'cleg' }, 400, 'invalid legs: must be aleg, bleg or both'],
    [{ text: 'hi', loop: 'yes' }, 400, 'invalid loop: must be true or false'],
    [{ text: 'hi', mix: 2 }, 400, 'invalid mix: must be true or false'],
  ])('Speak %j → %i', async (json, status, error) => {
    const res = await gw.request('POST', `${call()}/Speak/`, { json });
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ api_id: expect.any(String), error });
  });

  const DIGITS_RULE =
    'invalid digits: must be a string of 0-9, *, #, A-D, w (0.5 s wait) and W (1 s wait), at most 1000 characters';
  it.each([
    [{}, 422, 'missing required parameter: digits'],
    [{ leg: 'aleg' }, 422, 'missing required parameter: digits'],
    [{ digits: '' }, 400, DIGITS_RULE],
    [{ digits: '12x' }, 400, DIGITS_RULE],
    [{ digits: '1E' }, 400, DIGITS_RULE],
    [{ digits: '1'.repeat(1001) }, 400, DIGITS_RULE],
    [{ digits: '1', leg: 'both' }, 400, 'invalid leg: must be aleg or bleg'],
  ])('DTMF %j → %i', async (json, status, error) => {
    const res = await gw.request('POST', `${call()}/DTMF/`, { json });
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ api_id: expect.any(String), error });
  });

  it('takes every valid form to the call lookup (404 for an unknown call)', async () => {
    const forms: Record<string, string>[] = [
      { text: 'hi', voice: 'MAN', language: 'es-US', legs: 'bleg', loop: 'false', mix: 'true' },
      { text: 'hi', language: 'ko-KR' },
    ];
    for (const form of forms) {
      expect((await gw.request('POST', `${call()}/Speak/`, { form })).status).toBe(404);
    }
    for (const digits of ['0123456789', '*#ABCD', '1w2W3']) {
      const res = await gw.request('POST', `${call()}/DTMF/`, { form: { digits, leg: 'bleg' } });
      expect(res.status).toBe(404);
    }
  });
});
