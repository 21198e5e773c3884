import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { decodeTelephoneEvent } from '../../../src/media/dtmf/index.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { chunks, strongestFrequency, tone as toneSamples } from '../../support/signal.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Calls placed with POST Call/, end to end: the gateway dials SIPp (the carrier), runs the
 * customer's answer XML from a real HTTP server, sends signed callbacks and writes the record.
 */
let gw: TestGateway;
let app: ClientApp;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
});

afterEach(async () => {
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await gw.close();
  await app.close();
});

async function carrier(scenario: string, variables: Record<string, string> = {}) {
  const uas = await startSippUas({ scenario, variables });
  carriers.push(uas);
  return uas;
}

async function mediaServer(): Promise<RtpPeer> {
  const peer = await RtpPeer.open();
  peers.push(peer);
  return peer;
}

function placeCall(to: string, extra: Record<string, string> = {}) {
  return gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
    json: {
      from: '+14155550100',
      to,
      answer_url: `${app.baseUrl}/answer`,
      hangup_url: `${app.baseUrl}/hangup`,
      ring_url: `${app.baseUrl}/ring`,
      ...extra,
    },
  });
}

async function hangupOf(index = 0) {
  await until(() => app.requestsTo('/hangup').length > index, 15_000);
  return app.requestsTo('/hangup')[index]!;
}

const rms = (pcm: Int16Array) =>
  Math.sqrt(pcm.reduce((s, v) => s + v * v, 0) / Math.max(1, pcm.length));

describe('outbound calls through the REST API', () => {
  it('dials, speaks the answer XML to the callee, runs off the end (4010), and bills it', async () => {
    const media = await mediaServer();
    const uas = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    app.serve('/answer', {
      body: '<Response><Speak>Thank you for calling the test line.</Speak></Response>',
    });
    const response = await placeCall(`sip:alice@127.0.0.1:${uas.port}`);
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      message: 'call fired',
      request_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      api_id: expect.any(String),
    });

    const hangup = await hangupOf();
    expect(hangup.params).toMatchObject({
      Event: 'Hangup',
      CallStatus: 'completed',
      Direction: 'outbound',
      From: '+14155550100',
      To: `sip:alice@127.0.0.1:${uas.port}`,
      RequestUUID: response.body.request_uuid,
      HangupCauseCode: '4010',
      HangupCauseName: 'End Of XML Instructions',
      HangupSource: 'Answer XML',
    });
    const tokens = { accountToken: gw.main.token, mainToken: gw.main.token };
    expectValidSignatures(hangup, tokens);
    const [answer] = app.requestsTo('/answer');
    expect(answer!.params).toMatchObject({ Event: 'StartApp', CallStatus: 'in-progress' });
    expectValidSignatures(answer!, tokens);
    expect(app.requestsTo('/ring')[0]?.params).toMatchObject({
      Event: 'Ring',
      CallStatus: 'ringing',
    });

    // The callee heard speech.
    const heard = muLawDecode(
      Buffer.concat(media.received.filter((p) => p.payloadType === 0).map((p) => p.payload)),
    );
    expect(rms(heard)).toBeGreaterThan(300);

    // The record: answered, a 60 s minimum at the deck's SIP rate.
    const uuid = hangup.params.CallUUID!;
    let record;
    await until(async () => {
      record = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
      return record.status === 200;
    });
    expect(record!.body).toMatchObject({
      call_uuid: uuid,
      call_direction: 'outbound',
      from_number: '+14155550100',
      hangup_cause_code: 4010,
      hangup_cause_name: 'End Of XML Instructions',
      billed_duration: 60,
      total_rate: '0.00300',
      total_amount: '0.00300',
      call_state: 'ANSWER',
      source_ip: '127.0.0.1',
    });
    expect((await uas.stop()).errors).toEqual([]);
  });

  it('hangs up hangup_on_ring seconds after the ringing started, answered or not', async () => {
    const media = await mediaServer();
    const uas = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    app.serve('/answer', { body: '<Response><Wait length="20"/></Response>' });
    expect(
      (await placeCall(`sip:frank@127.0.0.1:${uas.port}`, { hangup_on_ring: '2' })).status,
    ).toBe(201);
    await until(() => app.requestsTo('/hangup').length > 0, 8000);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
      HangupCauseName: 'Scheduled Hangup',
      CallStatus: 'completed',
    });
  }, 15_000);

  it('reports a busy callee on the hangup callback and bills nothing', async () => {
    const uas = await carrier('carrier-busy.xml');
    await placeCall(`sip:bob@127.0.0.1:${uas.port}`);
    const hangup = await hangupOf();
    expect(hangup.params).toMatchObject({ CallStatus: 'busy', HangupCauseCode: '3010' });
    expect(app.requestsTo('/answer')).toHaveLength(0);
    await until(
      async () =>
        (await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${hangup.params.CallUUID}/`))
          .status === 200,
    );
    const record = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/Call/${hangup.params.CallUUID}/`,
    );
    expect(record.body).toMatchObject({
      billed_duration: 0,
      total_amount: '0.00000',
      call_state: 'BUSY',
    });
  });

  it('places one call per destination of a bulk request; a failing one leaves the others untouched', async () => {
    const media = await mediaServer();
    const answering = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    const busy = await carrier('carrier-busy.xml');
    app.serve('/answer', { body: '<Response><Speak>Hello.</Speak><Hangup/></Response>' });
    const res = await placeCall(
      `sip:one@127.0.0.1:${answering.port}<sip:two@127.0.0.1:${busy.port}<sip:three@127.0.0.1:${answering.port}`,
    );
    expect(res.status).toBe(201);
    await until(() => app.requestsTo('/hangup').length >= 3, 15_000);
    const byTo: Record<string, Record<string, string>> = Object.fromEntries(
      app.requestsTo('/hangup').map((r) => [r.params.To!.split('@')[0]!, r.params]),
    );
    expect(byTo['sip:one']).toMatchObject({ HangupCauseCode: '4000', CallStatus: 'completed' });
    expect(byTo['sip:two']).toMatchObject({ HangupCauseCode: '3010', CallStatus: 'busy' });
    expect(byTo['sip:three']).toMatchObject({ HangupCauseCode: '4000', CallStatus: 'completed' });
    // One request, three calls, each with its own uuid and record.
    const uuids = new Set(Object.values(byTo).map((p) => p.CallUUID));
    expect(uuids.size).toBe(3);
    expect(new Set(Object.values(byTo).map((p) => p.RequestUUID))).toEqual(
      new Set([res.body.request_uuid]),
    );
  }, 20_000);

  it('ends the call with 8011 on answer XML that does not validate, and still writes its record', async () => {
    const media = await mediaServer();
    const uas = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    app.serve('/answer', { body: '<Response><Speak robot="yes">Hi</Speak></Response>' });
    await placeCall(`sip:carol@127.0.0.1:${uas.port}`);
    const hangup = await hangupOf();
    expect(hangup.params).toMatchObject({
      HangupCauseCode: '8011',
      HangupCauseName: 'Invalid Answer XML',
    });
    await until(
      async () =>
        (await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${hangup.params.CallUUID}/`))
          .status === 200,
    );
  });

  it('ends a Redirect loop with 8014 once more than ten documents in a row did nothing but redirect', async () => {
    const uas = await carrier('uas-invite.xml');
    app.serve('/answer', { body: `<Response><Redirect>${app.baseUrl}/loop</Redirect></Response>` });
    app.serve('/loop', { body: `<Response><Redirect>${app.baseUrl}/loop</Redirect></Response>` });
    await placeCall(`sip:ivan@127.0.0.1:${uas.port}`);
    expect((await hangupOf()).params).toMatchObject({
      HangupCauseCode: '8014',
      HangupCauseName: 'Invalid Redirect XML',
    });
    // The answer document and ten /loop ones redirected; the eleventh redirect ended it.
    expect(app.requestsTo('/loop')).toHaveLength(11);
    // Redirects between documents that do something are how an IVR goes round: not a loop.
    app.reset();
    app.serve('/answer', { body: `<Response><Redirect>${app.baseUrl}/menu</Redirect></Response>` });
    let rounds = 0;
    app.serve('/menu', () => ({
      body:
        ++rounds < 12
          ? `<Response><DTMF>1</DTMF><Redirect>${app.baseUrl}/menu</Redirect></Response>`
          : '<Response><Hangup/></Response>',
    }));
    await placeCall(`sip:ivan@127.0.0.1:${uas.port}`);
    await until(() => app.requestsTo('/hangup').length > 0, 20_000);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({ HangupCauseCode: '4000' });
    expect(rounds).toBe(12);
  }, 40_000);

  it('falls back to fallback_url after the answer_url fails three times, then 7011 when that fails too', async () => {
    const media = await mediaServer();
    const uas = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    app.serve('/answer', { status: 500, body: 'down' });
    app.serve('/fallback', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:dave@127.0.0.1:${uas.port}`, { fallback_url: `${app.baseUrl}/fallback` });
    const first = await hangupOf();
    expect(app.requestsTo('/answer')).toHaveLength(3);
    expect(app.requestsTo('/fallback')).toHaveLength(1);
    expect(first.params).toMatchObject({ HangupCauseCode: '4000', HangupSource: 'Answer XML' });

    app.serve('/fallback', { status: 404, body: 'gone' });
    await placeCall(`sip:dave@127.0.0.1:${uas.port}`, { fallback_url: `${app.baseUrl}/fallback` });
    const second = await hangupOf(1);
    expect(second.params).toMatchObject({
      HangupCauseCode: '7011',
      HangupCauseName: 'Error Reaching Answer URL',
    });
  }, 30_000);

  it.each([
    [
      'GetDigits playBeep, after its prompt',
      '<GetDigits timeout="3" playBeep="true"><Wait length="1"/></GetDigits>',
    ],
  ])(
    'beeps (1 kHz, 250 ms) for %s',
    async (_what, xml) => {
      const media = await mediaServer();
      const uas = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
      app.serve('/answer', { body: `<Response>${xml}</Response>` });
      await placeCall(`sip:gina@127.0.0.1:${uas.port}`);
      await hangupOf();
      const heard = media.received.filter((p) => p.payloadType === 0);
      const frames = heard.map((p) => muLawDecode(p.payload));
      const loud = frames.map((f, i) => ({ i, loud: rms(f) > 1000 })).filter((f) => f.loud);
      // One burst of about 12 frames, starting about 1 s (50 frames) after the audio began.
      expect(loud.length).toBeGreaterThanOrEqual(11);
      expect(loud.length).toBeLessThanOrEqual(14);
      expect(loud.at(-1)!.i - loud[0]!.i).toBe(loud.length - 1);
      expect(loud[0]!.i).toBeGreaterThan(40);
      const burst = Int16Array.from(loud.flatMap((f) => [...frames[f.i]!]));
      expect(strongestFrequency(burst, 8000, 10)).toBe(1000);
    },
    20_000,
  );

  it('ends a Wait with silence once the callee has been quiet for minSilence, not before', async () => {
    const media = await mediaServer();
    const uas = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    app.serve('/answer', {
      body: '<Response><Wait length="15" silence="true" minSilence="500"/><Hangup/></Response>',
    });
    await placeCall(`sip:hank@127.0.0.1:${uas.port}`);
    await until(() => media.received.length > 0, 8000);
    // The callee talks for 2 s (a tone at -12 dBFS), then says nothing.
    const talk = [...chunks(toneSamples(8000, 1004, 2, 8000), [160])].map((c) => muLawEncode(c));
    await media.stream(media.received.at(-1)!.from.port, talk, { payloadType: 0 });
    const quietFrom = Date.now();
    expect(app.requestsTo('/hangup')).toHaveLength(0);
    await until(() => app.requestsTo('/hangup').length > 0, 4000);
    const waited = Date.now() - quietFrom;
    expect(waited).toBeGreaterThanOrEqual(400);
    expect((await hangupOf()).params).toMatchObject({ HangupCauseName: 'Normal Hangup' });
  }, 20_000);

  it("ends a Wait with beep once the callee's voicemail beeps, not at its greeting", async () => {
    const media = await mediaServer();
    const uas = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    app.serve('/answer', {
      body: '<Response><Wait length="15" beep="true"/><Hangup/></Response>',
    });
    await placeCall(`sip:ivan@127.0.0.1:${uas.port}`);
    await until(() => media.received.length > 0, 8000);
    // A greeting (two tones at once, as DTMF is: not a beep) for 1 s, then a 1 kHz beep.
    const high = toneSamples(8000, 1209, 1, 5000);
    const greeting = toneSamples(8000, 697, 1, 5000).map((s, i) => s + high[i]!);
    const beep = toneSamples(8000, 1000, 0.5, 8000);
    const frames = [...chunks(greeting, [160]), ...chunks(beep, [160])].map((c) => muLawEncode(c));
    const streaming = media.stream(media.received.at(-1)!.from.port, frames, { payloadType: 0 });
    const startedAt = Date.now();
    await until(() => app.requestsTo('/hangup').length > 0, 6000);
    const waited = Date.now() - startedAt;
    // Not during the greeting: after the beep began (1 s in) and within a moment of it.
    expect(waited).toBeGreaterThanOrEqual(1000);
    expect(waited).toBeLessThan(4000);
    await streaming;
    expect((await hangupOf()).params).toMatchObject({ HangupCauseName: 'Normal Hangup' });
  }, 20_000);

  it("collects the callee's RFC 4733 digits with GetDigits and posts them to the action", async () => {
    const uas = await carrier('carrier-dtmf.xml', { wait_ms: '300' });
    app.serve('/answer', {
      body: `<Response><GetDigits action="${app.baseUrl}/digits" timeout="5" finishOnKey="#"><Speak>Enter your code then hash.</Speak></GetDigits></Response>`,
    });
    app.serve('/digits', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:erin@127.0.0.1:${uas.port}`);
    await hangupOf();
    expect(app.requestsTo('/digits')[0]?.params).toMatchObject({ Digits: '12' });
  }, 20_000);
});

describe('SIP destinations with credentials', () => {
  it("answers the carrier's digest challenge, and ends 4240 sip_auth_failed when refused", async () => {
    const uas = await carrier('carrier-auth.xml');
    app.serve('/answer', { body: '<Response><Hangup/></Response>' });
    const to = `sip:secure@127.0.0.1:${uas.port}`;
    await placeCall(to, { sip_auth_username: 'carrieruser', sip_auth_password: 'Carrier-Pass1' });
    expect((await hangupOf(0)).params).toMatchObject({
      HangupCauseCode: '4000',
      CallStatus: 'completed',
    });
    await placeCall(to, { sip_auth_username: 'carrieruser', sip_auth_password: 'Wrong-Pass1' });
    const refused = (await hangupOf(1)).params;
    expect(refused).toMatchObject({
      HangupCauseCode: '4240',
      HangupCauseName: 'sip_auth_failed',
      CallStatus: 'failed',
    });
    // The credentials appear in no callback and no log line.
    for (const request of app.received) expect(request.body + request.url).not.toMatch(/Pass1/);
    expect(gw.logs.join('\n')).not.toMatch(/Carrier-Pass1|Wrong-Pass1/);
    expect((await uas.stop()).errors).toEqual([]);
  }, 20_000);

  it('sends sip_headers without the X-PH- prefix when the call uses SIP authentication', async () => {
    const uas = await startSippUas({ scenario: 'carrier-auth.xml', traceMessages: true });
    carriers.push(uas);
    app.serve('/answer', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:secure@127.0.0.1:${uas.port}`, {
      sip_auth_username: 'carrieruser',
      sip_auth_password: 'Carrier-Pass1',
      sip_headers: 'Team=blue,PH-Secret=x',
    });
    await hangupOf(0);
    const { messages } = await uas.stop();
    expect(messages).toMatch(/\r?\nTeam: blue\r?\n/);
    expect(messages).not.toContain('X-PH-Team');
    expect(messages).not.toContain('PH-Secret');
  }, 20_000);

  it("answers a digest challenge to its BYE with the call's credentials, once", async () => {
    const right = await carrier('carrier-bye-auth.xml');
    app.serve('/answer', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:secure@127.0.0.1:${right.port}`, {
      sip_auth_username: 'carrieruser',
      sip_auth_password: 'Carrier-Pass1',
    });
    await hangupOf(0);

    // Refused again: the BYE is not sent a third time, and the call is over all the same.
    const wrong = await carrier('carrier-bye-auth.xml');
    await placeCall(`sip:secure@127.0.0.1:${wrong.port}`, {
      sip_auth_username: 'carrieruser',
      sip_auth_password: 'Wrong-Pass1',
    });
    expect((await hangupOf(1)).params).toMatchObject({ HangupCauseCode: '4000' });
    await sleep(1500);
    const [good, bad] = [await right.stop(), await wrong.stop()];
    expect(good).toMatchObject({ successful: 1, failed: 0, errors: [] });
    // A new request each time (RFC 3261 8.1.3.5): the BYE with credentials has a higher CSeq.
    const cseqs = good.logs.map((line) => Number(/CSeq (\d+)/.exec(line)?.[1]));
    expect(cseqs).toHaveLength(2);
    expect(cseqs[1]).toBeGreaterThan(cseqs[0]!);
    expect(bad).toMatchObject({ successful: 0, failed: 1 });
    expect(gw.logs.join('\n')).not.toMatch(/Carrier-Pass1|Wrong-Pass1/);
  }, 20_000);
});

describe('Dial', () => {
  it('bridges the caller with the first B leg to answer, tones both ways, and posts DialStatus', async () => {
    const [aMedia, bMedia] = [await mediaServer(), await mediaServer()];
    const aCarrier = await carrier('carrier-answer.xml', { rtp_port: String(aMedia.port) });
    const bCarrier = await carrier('carrier-answer.xml', { rtp_port: String(bMedia.port) });
    app.serve('/answer', {
      body: `<Response><Dial action="${app.baseUrl}/dialed" timeLimit="6"><User>sip:bob@127.0.0.1:${bCarrier.port}</User></Dial></Response>`,
    });
    app.serve('/dialed', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:alice@127.0.0.1:${aCarrier.port}`);

    // Once B answers, each side's media server sends a tone back to where the gateway's RTP
    // comes from.
    await until(() => bMedia.received.length > 10, 8000);
    await until(() => aMedia.received.length > 10, 8000);
    const tone = (hz: number) =>
      [...chunks(toneSamples(8000, hz, 1.5, 8000), [160])].map((c) => muLawEncode(c));
    await Promise.all([
      aMedia.stream(aMedia.received.at(-1)!.from.port, tone(1004), { payloadType: 0 }),
      bMedia.stream(bMedia.received.at(-1)!.from.port, tone(600), { payloadType: 0 }),
    ]);
    const since = (peer: RtpPeer, from: number) =>
      muLawDecode(
        Buffer.concat(
          peer.received
            .slice(from)
            .filter((p) => p.payloadType === 0)
            .map((p) => p.payload),
        ),
      );
    const heardByB = since(bMedia, bMedia.received.length - 60);
    const heardByA = since(aMedia, aMedia.received.length - 60);
    expect(strongestFrequency(heardByB.subarray(1600, 5600), 8000, 2)).toBe(1004);
    expect(strongestFrequency(heardByA.subarray(1600, 5600), 8000, 2)).toBe(600);

    // Digits sent to the B leg of the live call reach the B side only, as RFC 4733 events.
    const aUuid = app.requestsTo('/answer')[0]!.params.CallUUID!;
    const dtmf = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/${aUuid}/DTMF/`, {
      json: { digits: '7', leg: 'bleg' },
    });
    expect(dtmf.status).toBe(200);
    await until(() => bMedia.received.some((p) => p.payloadType === 101), 3000);
    expect(aMedia.received.some((p) => p.payloadType === 101)).toBe(false);

    await until(() => app.requestsTo('/dialed').length > 0, 10_000);
    const dialed = app.requestsTo('/dialed')[0]!.params;
    expect(dialed).toMatchObject({ DialStatus: 'completed', DialHangupCause: 'Scheduled Hangup' });
    const hangup = await hangupOf();
    expect(dialed.DialALegUUID).toBe(hangup.params.CallUUID);

    // Both legs have records; the B leg's parent is the A leg, and each is billed.
    await until(
      async () =>
        (await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${dialed.DialBLegUUID}/`))
          .status === 200,
    );
    const bRecord = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/Call/${dialed.DialBLegUUID}/`,
    );
    expect(bRecord.body).toMatchObject({
      parent_call_uuid: dialed.DialALegUUID,
      billed_duration: 60,
      call_state: 'ANSWER',
    });
  }, 30_000);

  it("passes each side's RFC 4733 digits to the other as RFC 4733 events", async () => {
    const [aMedia, bMedia] = [await mediaServer(), await mediaServer()];
    const aCarrier = await carrier('carrier-answer.xml', { rtp_port: String(aMedia.port) });
    const bCarrier = await carrier('carrier-answer.xml', { rtp_port: String(bMedia.port) });
    app.serve('/answer', {
      body: `<Response><Dial timeLimit="4"><User>sip:bob@127.0.0.1:${bCarrier.port}</User></Dial></Response>`,
    });
    await placeCall(`sip:alice@127.0.0.1:${aCarrier.port}`);
    await until(() => bMedia.received.length > 10, 8000);
    await until(() => aMedia.received.length > 10, 8000);
    const eventsHeard = (peer: RtpPeer) =>
      peer.received
        .filter((p) => p.payloadType === 101)
        .map((p) => ({ timestamp: p.timestamp, ...decodeTelephoneEvent(p.payload) }));
    const keysHeard = (peer: RtpPeer) => [
      ...new Set(eventsHeard(peer).map((e) => `${e.timestamp}:${e.event}`)),
    ];

    await aMedia.pressKey(aMedia.received.at(-1)!.from.port, 5);
    await until(() => eventsHeard(bMedia).some((e) => e.end), 3000);
    await bMedia.pressKey(bMedia.received.at(-1)!.from.port, 11); // #
    await until(() => eventsHeard(aMedia).some((e) => e.end), 3000);
    await sleep(300);

    // One key each way, each a whole event (a start with the marker, an end), none echoed back.
    expect(keysHeard(bMedia).map((k) => k.split(':')[1])).toEqual(['5']);
    expect(keysHeard(aMedia).map((k) => k.split(':')[1])).toEqual(['11']);
    for (const peer of [aMedia, bMedia]) {
      const packets = peer.received.filter((p) => p.payloadType === 101);
      expect(packets[0]!.marker).toBe(true);
      expect(decodeTelephoneEvent(packets.at(-1)!.payload).end).toBe(true);
    }
    await hangupOf();
  }, 30_000);

  it("sends a Number's digits during its early media with sendOnPreanswer", async () => {
    const [aMedia, bMedia] = [await mediaServer(), await mediaServer()];
    const aCarrier = await carrier('carrier-answer.xml', { rtp_port: String(aMedia.port) });
    // The number's carrier plays early media for 3 s and never answers.
    const bCarrier = await carrier('carrier-early-busy.xml', {
      rtp_port: String(bMedia.port),
    });
    const own = await startGateway({
      listen: true,
      env: { VOXGATE_CARRIER_URI: `sip:127.0.0.1:${bCarrier.port}` },
    });
    try {
      app.serve('/answer', {
        body: `<Response><Dial><Number sendDigits="42" sendOnPreanswer="true">+14155550199</Number></Dial></Response>`,
      });
      const res = await own.request('POST', `/v1/Account/${own.main.id}/Call/`, {
        json: {
          from: '+14155550100',
          to: `sip:alice@127.0.0.1:${aCarrier.port}`,
          answer_url: `${app.baseUrl}/answer`,
          hangup_url: `${app.baseUrl}/hangup`,
        },
      });
      expect(res.status).toBe(201);
      const events = () =>
        bMedia.received
          .filter((p) => p.payloadType === 101)
          .map((p) => ({ timestamp: p.timestamp, ...decodeTelephoneEvent(p.payload) }));
      const ended = () =>
        new Set(
          events()
            .filter((e) => e.end)
            .map((e) => e.timestamp),
        );
      await until(() => ended().size >= 2, 3000);
      const keys = [...new Set(events().map((e) => `${e.timestamp}:${e.event}`))];
      expect(keys.map((k) => k.split(':')[1])).toEqual(['4', '2']);
    } finally {
      await own.close();
    }
  }, 20_000);

  it('connects only a B leg that presses confirmKey, and tells callbackUrl of its answer, digits and hangup', async () => {
    const aMedia = await mediaServer();
    const aCarrier = await carrier('carrier-answer.xml', { rtp_port: String(aMedia.port) });
    const bCarrier = await carrier('carrier-dtmf.xml', { wait_ms: '300' });
    app.serve('/answer', {
      body: `<Response><Dial action="${app.baseUrl}/dialed" callbackUrl="${app.baseUrl}/dial-events" confirmKey="1" digitsMatch="12" timeLimit="4"><User>sip:bob@127.0.0.1:${bCarrier.port}</User></Dial></Response>`,
    });
    app.serve('/dialed', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:alice@127.0.0.1:${aCarrier.port}`);
    // B pressed 1 (SIPp's capture): connected. Now the caller presses 1 then 2.
    await until(() => app.requestsTo('/dial-events').length > 0, 10_000);
    await sleep(1000);
    const gatewayPort = aMedia.received.at(-1)!.from.port;
    for (const event of [1, 2]) await aMedia.pressKey(gatewayPort, event);
    await until(() => app.requestsTo('/dialed').length > 0, 15_000);
    expect(app.requestsTo('/dialed')[0]!.params).toMatchObject({ DialStatus: 'completed' });
    // The B leg's hangup event goes out moments before the action URL is asked, each its own
    // request: the action's may arrive first.
    await until(() => app.requestsTo('/dial-events').length === 3, 5000);
    const events = app.requestsTo('/dial-events').map((r) => r.params);
    expect(events.map((e) => e.DialAction)).toEqual(['answer', 'digits', 'hangup']);
    expect(events[1]).toMatchObject({ DialDigitsMatch: '12' });
    expect(events[2]).toMatchObject({ DialBLegHangupCause: 'Scheduled Hangup' });
  }, 30_000);

  it('plays dialMusic XML (Speak, Wait) to the caller while the called party rings', async () => {
    const media = await mediaServer();
    const aCarrier = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    const ringing = await carrier('carrier-no-answer.xml');
    app.serve('/answer', {
      body: `<Response><Dial timeout="4" dialMusic="${app.baseUrl}/music"><User>sip:bob@127.0.0.1:${ringing.port}</User></Dial></Response>`,
    });
    app.serve('/music', {
      body: '<Response><Speak>Please hold while we connect you.</Speak><Wait length="1"/></Response>',
    });
    await placeCall(`sip:alice@127.0.0.1:${aCarrier.port}`);
    await hangupOf();
    // Fetched as the call's documents are: POSTed with its parameters, signed.
    const fetched = app.requestsTo('/music');
    expect(fetched.length).toBeGreaterThanOrEqual(1);
    expect(fetched[0]!.method).toBe('POST');
    expect(fetched[0]!.params.CallUUID).toMatch(UUID);
    expectValidSignatures(fetched[0]!, { accountToken: gw.main.token, mainToken: gw.main.token });
    // The caller heard speech while it rang: a second of it at least, not a tone.
    const frames = media.received
      .filter((p) => p.payloadType === 0)
      .map((p) => muLawDecode(p.payload));
    const spoken = frames.filter((f) => rms(f) > 500);
    expect(spoken.length).toBeGreaterThan(50);
    const speech = Int16Array.from(spoken.flatMap((f) => [...f]));
    expect(strongestFrequency(speech, 8000, 10)).not.toBe(440);
  }, 30_000);

  it('reports the most telling outcome of several targets none of which answered', async () => {
    const media = await mediaServer();
    const aCarrier = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    const unavailable = await carrier('carrier-unavailable.xml');
    const busy = await carrier('carrier-busy.xml');
    app.serve('/answer', {
      body: `<Response><Dial action="${app.baseUrl}/dialed"><User>sip:gone@127.0.0.1:${unavailable.port}</User><User>sip:busy@127.0.0.1:${busy.port}</User></Dial></Response>`,
    });
    app.serve('/dialed', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:alice@127.0.0.1:${aCarrier.port}`);
    await until(() => app.requestsTo('/dialed').length > 0, 15_000);
    // The first target failed (503), the second was busy: the caller hears busy.
    expect(app.requestsTo('/dialed')[0]!.params).toMatchObject({
      DialStatus: 'busy',
      DialHangupCause: 'Busy Line',
    });
  }, 30_000);

  it('cancels a B leg still ringing at Dial timeout and posts no-answer', async () => {
    const media = await mediaServer();
    const aCarrier = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    const ringing = await carrier('carrier-no-answer.xml');
    app.serve('/answer', {
      body: `<Response><Dial action="${app.baseUrl}/dialed" timeout="2"><User>sip:bob@127.0.0.1:${ringing.port}</User></Dial></Response>`,
    });
    app.serve('/dialed', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:alice@127.0.0.1:${aCarrier.port}`);
    await until(() => app.requestsTo('/dialed').length > 0, 15_000);
    const dialed = app.requestsTo('/dialed')[0]!;
    expect(dialed.params).toMatchObject({ DialStatus: 'no-answer' });
    // Two seconds of ringing from the document's arrival, not the default 30.
    const rang = dialed.receivedAt - app.requestsTo('/answer')[0]!.receivedAt;
    expect(rang).toBeGreaterThanOrEqual(1900);
    expect(rang).toBeLessThan(6000);
    // The ringing callee got a CANCEL and ended its INVITE with 487 (its ACK may still be on
    // its way when the action URL hears of it).
    await ringing.settled(1);
    expect(await ringing.stop()).toMatchObject({ successful: 1, failed: 0 });
  }, 30_000);

  it('ends the B leg when the caller presses * with hangupOnStar, and goes on with the action', async () => {
    const [aMedia, bMedia] = [await mediaServer(), await mediaServer()];
    const aCarrier = await carrier('carrier-answer.xml', { rtp_port: String(aMedia.port) });
    const bCarrier = await carrier('carrier-answer.xml', { rtp_port: String(bMedia.port) });
    app.serve('/answer', {
      body: `<Response><Dial action="${app.baseUrl}/dialed" hangupOnStar="true" timeLimit="20"><User>sip:bob@127.0.0.1:${bCarrier.port}</User></Dial></Response>`,
    });
    app.serve('/dialed', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:alice@127.0.0.1:${aCarrier.port}`);
    await until(() => bMedia.received.length > 10, 8000);
    await until(() => aMedia.received.length > 10, 8000);
    const pressedAt = Date.now();
    await aMedia.pressKey(aMedia.received.at(-1)!.from.port, 10); // *
    await until(() => app.requestsTo('/dialed').length > 0, 8000);
    const dialed = app.requestsTo('/dialed')[0]!;
    expect(dialed.receivedAt - pressedAt).toBeLessThan(3000);
    expect(dialed.params).toMatchObject({ DialStatus: 'completed' });
    // The B side got its BYE, and never heard the * itself.
    expect(await bCarrier.stop()).toMatchObject({ successful: 1, failed: 0 });
    expect(bMedia.received.some((p) => p.payloadType === 101)).toBe(false);
    // The caller stayed on the line for the action's document, which hung up.
    const hangup = await hangupOf();
    expect(hangup.receivedAt).toBeGreaterThanOrEqual(dialed.receivedAt);
  }, 30_000);

  it('drops a B leg that presses another key than confirmKey', async () => {
    const media = await mediaServer();
    const aCarrier = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    const bCarrier = await carrier('carrier-dtmf.xml', { wait_ms: '300' });
    app.serve('/answer', {
      body: `<Response><Dial action="${app.baseUrl}/dialed" confirmKey="9"><User>sip:bob@127.0.0.1:${bCarrier.port}</User></Dial></Response>`,
    });
    app.serve('/dialed', { body: '<Response><Hangup/></Response>' });
    await placeCall(`sip:alice@127.0.0.1:${aCarrier.port}`);
    await until(() => app.requestsTo('/dialed').length > 0, 15_000);
    expect(app.requestsTo('/dialed')[0]!.params).toMatchObject({
      DialStatus: 'no-answer',
      DialHangupCause: 'Rejected',
    });
  }, 30_000);
});
