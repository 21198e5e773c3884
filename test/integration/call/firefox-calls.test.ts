import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserUserSetup,
  startBrowserPhone,
  voiceToken,
  type BrowserPhone,
  placeCall,
} from '../../support/browser-phone.js';
import { ClientApp, paramsOf } from '../../support/client-app.js';
import { wavSamples } from '../../support/phone-audio.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { powerAt, strongestFrequency, tone } from '../../support/signal.js';
import { openSipPeer, type SipPeer } from '../../support/sip-peer.js';
import { StreamServer } from '../../support/stream-server.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Firefox is a browser the SDKs run in too, and its WebRTC stack is not Chromium's: its own ICE
 * agent (regular nomination), NSS's DTLS, an offer with stereo Opus, G722 and transport-cc.
 * sip.js in headless Firefox ESR, registered over WebSocket with a token, calls a stream
 * application (the gateway the DTLS client: Firefox offers actpass) and is called by `POST
 * Call/` (the gateway the DTLS server: Firefox answers active), Dials a user signed in on
 * Chromium (sip.js in headless Chromium, its fake microphone playing 700 Hz), and meets that
 * user and a G.711 phone in a conference, and is recorded. Firefox's fake microphone plays a
 * 1 kHz tone.
 *
 * Firefox never pairs its candidates with a loopback one (whatever its loopback preference
 * says), so the gateway's media here announces and binds this machine's own LAN address. The
 * packets stay on this machine; SIP, the application and the stream server stay on loopback.
 */
const FIREFOX_TONE_HZ = 1000;
const CHROMIUM_TONE_HZ = 700;
/** A number of the application, for a G.711 phone (a SIP peer of the test) to call. */
const NUMBER = '14155550177';

/** The first IPv4 address of this machine that is not loopback, or null. */
function lanAddress(): string | null {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.family === 'IPv4' && !entry.internal) return entry.address;
    }
  }
  return null;
}

const lan = lanAddress();

let gw: TestGateway;
let app: ClientApp;
let bot: StreamServer;
let phone: BrowserPhone;
let chromium: BrowserPhone;
let sip: SipPeer;

beforeAll(async () => {
  if (lan === null) return;
  app = await ClientApp.start();
  bot = await StreamServer.start();
  gw = await startGateway({
    listen: true,
    env: { VOXGATE_RTP_HOST: '0.0.0.0', VOXGATE_PUBLIC_HOST: lan },
  });
  const { appId, token } = await browserUserSetup(gw, app, 'firefox phones', 'fox');
  const number = await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
    json: { numbers: NUMBER, carrier: 'Own SIP', region: 'West', app_id: appId },
  });
  expect(number.status).toBeLessThan(300);
  sip = await openSipPeer();
  phone = await startBrowserPhone({ browser: 'firefox' });
  const wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
  // The gateway's SIP domain is its public host: the user's AOR is on it.
  await phone.register(wsUrl, `sip:fox@${lan}`, token);
  chromium = await startBrowserPhone({ toneHz: CHROMIUM_TONE_HZ });
  await chromium.register(wsUrl, `sip:chrome@${lan}`, await voiceToken(gw, 'chrome'));
}, 60_000);

afterAll(async () => {
  sip?.stack.close();
  await chromium?.close();
  await phone?.close();
  await gw?.close();
  await bot?.close();
  await app?.close();
});

describe.skipIf(lan === null)('a browser phone in Firefox (sip.js, WebRTC media)', () => {
  it('calls a stream: the server hears its tone in L16 16 kHz and its digit, and plays audio it hears', async () => {
    app.serve('/answer', {
      body:
        '<Response>' +
        `<Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-l16;rate=16000">${bot.url}</Stream>` +
        '</Response>',
    });
    const outcome = await phone.call('sip:agent-bot@127.0.0.1');
    expect(outcome).toMatchObject({ status: 200, answered: true });
    // Firefox offered actpass; the gateway answered active (it is the DTLS client) with Opus.
    expect(outcome.offer).toMatch(/^a=setup:actpass/m);
    expect(outcome.answer).toMatch(/^a=setup:active/m);
    expect(outcome.answer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 109 /m);
    const ws = await bot.connection(0);
    await until(() => ws.of('start').length === 1, 10_000);

    ws.playL16(tone(16000, 500, 4, 8000), 16000);
    await until(() => ws.payloads('inbound').length >= 100, 15_000);
    const heard = await phone.listen(1500);
    expect(Math.abs(heard.dominantHz - 500)).toBeLessThan(15);
    expect(heard.levelDbfs).toBeGreaterThan(-30);

    // Firefox's 1 kHz, through its Opus and SRTP, decoded at 16 kHz (not 8 kHz made wider).
    const bytes = Buffer.concat(ws.payloads('inbound').slice(-50));
    const inbound = new Int16Array(bytes.length >> 1);
    for (let i = 0; i < inbound.length; i++) inbound[i] = bytes.readInt16LE(i * 2);
    expect(strongestFrequency(inbound, 16000, 10)).toBe(FIREFOX_TONE_HZ);

    expect(await phone.sendDtmf('5')).toBe(true);
    await until(() => ws.of('dtmf').length === 1, 10_000);
    expect(ws.of('dtmf')[0]).toMatchObject({ dtmf: { digit: '5', track: 'inbound' } });
    expect(ws.violations).toEqual([]);

    await phone.hangUp();
    const params = await app.hangupOf('/answer');
    expect(params).toMatchObject({
      CallStatus: 'completed',
      HangupCauseCode: '4000',
      HangupSource: 'Caller',
    });
    const record = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${params.CallUUID}/`);
    expect(record.status).toBe(200);
    expect(Number(record.body.bill_duration)).toBeGreaterThanOrEqual(1);
    expect(phone.consoleErrors).toEqual([]);
  }, 60_000);

  it('is called by POST Call/: rings, answers active, hears the answer document, and is hung up', async () => {
    app.serve('/answer-out', {
      body: '<Response><Speak loop="10">Your table is ready. Please come to the front desk.</Speak></Response>',
    });
    // The address SIP listens on names the gateway as well as its public host does.
    await placeCall(gw, app, 'sip:fox@127.0.0.1', '/answer-out', '/hangup');
    const ringing = await phone.ringing(15_000);
    // The gateway offers WebRTC's media with actpass and its own LAN candidate.
    expect(ringing.offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF /m);
    expect(ringing.offer).toMatch(/^a=setup:actpass/m);
    expect(ringing.offer).toContain(` ${lan} `);
    await phone.answer(1000);
    await until(async () => (await phone.sessionStates()).includes('Established'), 10_000, 50);
    await until(
      async () => ['connected', 'completed'].includes((await phone.iceState()) ?? ''),
      10_000,
      50,
    );
    const speech = await phone.listen(1500);
    expect(speech.levelDbfs).toBeGreaterThan(-45);
    expect(speech.dominantHz).toBeGreaterThan(80);
    expect(speech.dominantHz).toBeLessThan(4000);

    const uuid = app.requestsTo('/answer-out')[0]!.params.CallUUID!;
    const hangup = await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
    expect(hangup.status).toBe(204);
    await until(async () => (await phone.sessionStates()).includes('Terminated'), 10_000, 50);
    expect(await app.hangupOf('/answer-out')).toMatchObject({
      CallStatus: 'completed',
      Direction: 'outbound',
    });
    expect(phone.consoleErrors).toEqual([]);
  }, 60_000);

  it('Dials a user in Chromium: relayed across their Opus payload types (109, 111), each hears the other, and a Speak mixes in', async () => {
    // The Firefox user's call runs the application, whose Dial rings the Chromium user.
    app.serve('/answer', {
      body: `<Response><Dial><User>sip:chrome@${lan}</User></Dial></Response>`,
    });
    const placed = phone.call(`sip:chrome@${lan}`);
    const ringing = await chromium.ringing(15_000);
    await chromium.answer(1000);
    const outcome = await placed;
    expect(outcome).toMatchObject({ status: 200, answered: true });
    // Each leg keeps its offerer's numbering of Opus: Firefox's 109, the gateway's own 111.
    expect(outcome.answer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 109 /m);
    expect(ringing.offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
    await until(async () => (await chromium.sessionStates()).includes('Established'), 10_000, 50);
    await until(async () => (await phone.sessionStates()).includes('Established'), 10_000, 50);

    // Chromium's 700 Hz in Firefox, Firefox's 1 kHz in Chromium.
    const [inFirefox, inChromium] = await Promise.all([phone.listen(1500), chromium.listen(1500)]);
    expect(Math.abs(inFirefox.dominantHz - CHROMIUM_TONE_HZ)).toBeLessThan(15);
    expect(Math.abs(inChromium.dominantHz - FIREFOX_TONE_HZ)).toBeLessThan(15);

    // The two legs are relayed; a Speak on Firefox's leg is mixed with what Chromium says,
    // not put in its place. Speech shows below the tones (espeak's voice, 250 to 450 Hz).
    const speechHz = [250, 300, 350, 400, 450];
    const probes = [CHROMIUM_TONE_HZ, ...speechHz];
    const speech = (heard: { probes: Record<number, number> }) =>
      Math.max(...speechHz.map((hz) => heard.probes[hz]!));
    const before = await phone.listen(1000, probes);
    expect(speech(before)).toBeLessThan(-45);
    const uuid = app.requestsTo('/answer').at(-1)!.params.CallUUID!;
    const speak = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/${uuid}/Speak/`, {
      json: { text: 'Please hold while we connect you to the next agent.', loop: 'true' },
    });
    expect(speak.status).toBe(200);
    await sleep(300);
    const during = await phone.listen(1500, probes);
    expect(speech(during)).toBeGreaterThan(-40);
    expect(during.probes[CHROMIUM_TONE_HZ]).toBeGreaterThan(-10);

    await phone.hangUp();
    await until(async () => (await chromium.sessionStates()).includes('Terminated'), 10_000, 50);
    expect(phone.consoleErrors).toEqual([]);
    expect(chromium.consoleErrors).toEqual([]);
  }, 60_000);

  it('meets a Chromium user and a G.711 phone in a conference: each hears the other two and not itself', async () => {
    app.serve('/answer', { body: '<Response><Conference>browsers</Conference></Response>' });
    const port = gw.gateway.sip.addresses.udp.port;
    const desk = await TonePhone.call(sip, { user: NUMBER, port, from: 'desk' }, 400);
    try {
      for (const browser of [phone, chromium]) {
        expect(await browser.call(`sip:room@${lan}`)).toMatchObject({ answered: true });
        await until(async () => (await browser.sessionStates()).includes('Established'), 10_000);
      }
      await sleep(500);
      const from = desk.now;
      const probes = [400, CHROMIUM_TONE_HZ, FIREFOX_TONE_HZ, 2500];
      const [inFirefox, inChromium] = await Promise.all([
        phone.listen(1500, probes),
        chromium.listen(1500, probes),
      ]);
      // Opus legs and a PCMU one meet in one mix: each member hears the others, never itself.
      expect(inFirefox.probes[400]).toBeGreaterThan(-20);
      expect(inFirefox.probes[CHROMIUM_TONE_HZ]).toBeGreaterThan(-20);
      expect(inFirefox.probes[FIREFOX_TONE_HZ]).toBeLessThan(-30);
      expect(inChromium.probes[400]).toBeGreaterThan(-20);
      expect(inChromium.probes[FIREFOX_TONE_HZ]).toBeGreaterThan(-20);
      expect(inChromium.probes[CHROMIUM_TONE_HZ]).toBeLessThan(-30);
      const atDesk = desk.heard(from);
      expect(atDesk.length).toBeGreaterThan(8000);
      const quiet = powerAt(atDesk, 8000, 2500);
      expect(powerAt(atDesk, 8000, CHROMIUM_TONE_HZ)).toBeGreaterThan(quiet * 1000);
      expect(powerAt(atDesk, 8000, FIREFOX_TONE_HZ)).toBeGreaterThan(quiet * 1000);
      expect(powerAt(atDesk, 8000, 400)).toBeLessThan(
        powerAt(atDesk, 8000, FIREFOX_TONE_HZ) / 1000,
      );
    } finally {
      await desk.hangup();
      await desk.close();
    }
    await phone.hangUp();
    await chromium.hangUp();
    expect(phone.consoleErrors).toEqual([]);
    expect(chromium.consoleErrors).toEqual([]);
  }, 60_000);

  it('is recorded: its own tone on the left of the file, the speech it heard on the right', async () => {
    app.serve('/answer', {
      body:
        `<Response><Record recordSession="true" fileFormat="wav" callbackUrl="${app.baseUrl}/recorded"/>` +
        '<Speak>Thank you for calling. This call is recorded.</Speak><Wait length="1"/></Response>',
    });
    expect(await phone.call(`sip:records@${lan}`)).toMatchObject({ answered: true });
    // The document's end ends the call, and the recording with it.
    await until(() => app.requestsTo('/recorded').length === 1, 20_000);
    const callback = paramsOf(app.requestsTo('/recorded')[0]!);
    expect(callback.RecordingStatus).toBe('completed');
    const file = await gw.download(callback.RecordUrl!);
    expect(file.body.readUInt16LE(22)).toBe(2);
    const { rate, pcm: left } = wavSamples(file.body);
    // At the call's rate: the browser's Opus is wideband, and so is its recording.
    expect(rate).toBe(16000);
    const right = new Int16Array(left.length);
    for (let i = 0; i < right.length; i++) right[i] = file.body.readInt16LE(44 + i * 4 + 2);
    const at = left.findIndex((s) => Math.abs(s) > 1000);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(strongestFrequency(left.subarray(at + rate / 10, at + rate / 2), rate, 10)).toBe(
      FIREFOX_TONE_HZ,
    );
    expect(right.some((s) => Math.abs(s) > 1000)).toBe(true);
    await until(async () => (await phone.sessionStates()).includes('Terminated'), 10_000, 50);
    expect(phone.consoleErrors).toEqual([]);
  }, 60_000);
});
