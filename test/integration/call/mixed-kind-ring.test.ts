import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip, type Baresip } from '../../support/baresip.js';
import { placeCall, startBrowserPhone, type BrowserPhone } from '../../support/browser-phone.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { powerAt } from '../../support/signal.js';
import { openSipPeer, type SipPeer } from '../../support/sip-peer.js';
import { StreamServer, type StreamConnection } from '../../support/stream-server.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * One endpoint signed in twice: on a desk phone (baresip over UDP, plain RTP with G.711) and
 * in a browser (JsSIP in headless Chromium over WebSocket, WebRTC). The two take different
 * offers, so a call to the endpoint rings each with its own: the phone a plain one, the
 * browser ICE, DTLS-SRTP and Opus. The first to answer has the call, with audio both ways to
 * the caller (a G.711 phone of the test dialling the endpoint's URI), and the other stops
 * ringing.
 */
const BROWSER_TONE_HZ = 700;
const CALLER_TONE_HZ = 400;
/** baresip's ausine source. */
const DESK_TONE_HZ = 440;

let gw: TestGateway;
let app: ClientApp;
let bot: StreamServer;
let sip: SipPeer;
let browser: BrowserPhone;
let desk: Baresip | null = null;
let username: string;
let password: string;

beforeAll(async () => {
  app = await ClientApp.start();
  bot = await StreamServer.start();
  gw = await startGateway({ listen: true });
  password = 'Desk-and-browser7';
  const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
    json: { username: 'twokinds', password, alias: 'twokinds' },
  });
  expect(created.status).toBe(201);
  username = created.body.username as string;
  sip = await openSipPeer();
  browser = await startBrowserPhone({ toneHz: BROWSER_TONE_HZ, stack: 'jssip' });
  const wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
  expect(
    await browser.registerDigest(wsUrl, `sip:${username}@127.0.0.1`, username, password),
  ).toEqual({ status: 200, reason: 'OK' });
}, 60_000);

afterEach(async () => {
  await desk?.stop();
  desk = null;
});

afterAll(async () => {
  sip?.stack.close();
  await browser?.close();
  await gw?.close();
  await bot?.close();
  await app?.close();
});

/**
 * The desk phone, registered as the endpoint beside the browser. The newest registration
 * leads (its kind's offer is the leg's first) and the other kind rings beside it: the phone,
 * unless `browserLeads` has the browser register again after it.
 */
async function signInDesk(answerMode: 'manual' | 'auto', browserLeads = false): Promise<Baresip> {
  desk = await startBaresip({
    username,
    password,
    registrar: { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port },
    answerMode,
  });
  await desk.waitForRegistered();
  if (browserLeads) expect(await browser.registerAgain()).toEqual({ status: 200, reason: 'OK' });
  return desk;
}

/** The caller dials the endpoint's URI; resolves once someone answered. */
function callEndpoint(): Promise<TonePhone> {
  const port = gw.gateway.sip.addresses.udp.port;
  return TonePhone.call(sip, { user: username, port, from: 'caller' }, CALLER_TONE_HZ);
}

/** What the caller hears over the next `ms` (8 kHz). */
async function heardByCaller(caller: TonePhone, ms: number): Promise<Int16Array> {
  const from = caller.now;
  await sleep(ms);
  return caller.heard(from);
}

/** A second of audio or more, with `hz` in it 20 dB above `not` (the other device's tone). */
function expectTone(pcm: Int16Array, hz: number, not: number): void {
  expect(pcm.length).toBeGreaterThan(8000);
  expect(powerAt(pcm, 8000, hz)).toBeGreaterThan(powerAt(pcm, 8000, not) * 100);
}

describe('an endpoint signed in on a desk phone and in a browser', () => {
  it('rings both with an offer each; the browser answers, and the phone stops ringing', async () => {
    const phone = await signInDesk('manual');
    const answered = callEndpoint();
    // Each is offered what it takes: WebRTC to the browser, plain RTP to the phone.
    const { offer } = await browser.ringing(10_000);
    expect(offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
    expect(offer).toMatch(/^a=fingerprint:sha-256 /m);
    await phone.waitForLine(/Incoming call from/i, 10_000);
    await browser.answer(1000);
    const caller = await answered;
    try {
      await until(async () => (await browser.sessionStates()).includes('Established'), 10_000, 50);
      // The phone's INVITE is cancelled: its ringing ends without a call (baresip 1.0.0 says
      // "session closed" of a CANCEL).
      await phone.waitForLine(/session closed/i, 10_000);
      expect(phone.output()).not.toMatch(/Call established/i);

      await sleep(300);
      const [inBrowser, atCaller] = await Promise.all([
        browser.listen(1500),
        heardByCaller(caller, 1500),
      ]);
      expect(Math.abs(inBrowser.dominantHz - CALLER_TONE_HZ)).toBeLessThan(15);
      expectTone(atCaller, BROWSER_TONE_HZ, DESK_TONE_HZ);
    } finally {
      await caller.hangup();
      await caller.close();
    }
    await until(async () => (await browser.sessionStates()).includes('Terminated'), 10_000, 50);
    expect(browser.consoleErrors).toEqual([]);
  }, 60_000);

  it('rings both; the phone answers, the browser stops ringing, and the caller hears the phone', async () => {
    const phone = await signInDesk('auto');
    const answered = callEndpoint();
    const { offer } = await browser.ringing(10_000);
    expect(offer).toMatch(/UDP\/TLS\/RTP\/SAVPF/);
    const caller = await answered;
    try {
      await phone.waitForLine(/Call established/i, 10_000);
      await until(async () => (await browser.ringingState()) === 'Terminated', 10_000, 50);

      await sleep(300);
      expectTone(await heardByCaller(caller, 1500), DESK_TONE_HZ, BROWSER_TONE_HZ);
    } finally {
      await caller.hangup();
      await caller.close();
    }
    expect(browser.consoleErrors).toEqual([]);
  }, 60_000);

  it('rings both for POST Call/; the browser answers, its stream hears the browser, one record', async () => {
    const phone = await signInDesk('manual');
    const streamed = callWithStream('/answer-browser');
    const { offer } = await browser.ringing(10_000);
    expect(offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
    await phone.waitForLine(/Incoming call from/i, 10_000);
    await browser.answer(1000);
    const ws = await streamed;
    await phone.waitForLine(/session closed/i, 10_000);
    expect(phone.output()).not.toMatch(/Call established/i);
    expect(strongerOnInbound(ws, BROWSER_TONE_HZ, DESK_TONE_HZ)).toBe(true);

    await browser.hangUp();
    const hangup = await app.hangupOf('/answer-browser');
    expect(hangup).toMatchObject({ CallStatus: 'completed', HangupCauseCode: '4000' });
    expect(Number(hangup.Duration)).toBeGreaterThanOrEqual(1);
    expect(ws.violations).toEqual([]);
    expect(browser.consoleErrors).toEqual([]);
  }, 60_000);

  it.each([
    ['the phone', false],
    ['the browser', true],
  ])(
    'rings both for POST Call/; the phone answers on the port offered to the browser too (%s leads)',
    async (_, browserLeads) => {
      await signInDesk('auto', browserLeads);
      const streamed = callWithStream(`/answer-desk-${browserLeads ? 'browser' : 'phone'}`);
      await browser.ringing(10_000);
      const ws = await streamed;
      await until(async () => (await browser.ringingState()) === 'Terminated', 10_000, 50);
      expect(strongerOnInbound(ws, DESK_TONE_HZ, BROWSER_TONE_HZ)).toBe(true);

      await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/`);
      const hangup = await app.hangupOf(`/answer-desk-${browserLeads ? 'browser' : 'phone'}`);
      expect(hangup).toMatchObject({ CallStatus: 'completed' });
      expect(ws.violations).toEqual([]);
    },
    60_000,
  );
});

/**
 * Places `POST Call/` to the endpoint, whose answer document streams what the answering
 * device sends (L16, 16 kHz); resolves with the stream's connection once it carries 1.5 s.
 */
async function callWithStream(answerPath: string): Promise<StreamConnection> {
  app.serve(answerPath, {
    body:
      '<Response><Stream keepCallAlive="true" contentType="audio/x-l16;rate=16000">' +
      `${bot.url}</Stream></Response>`,
  });
  const index = bot.connections.length;
  await placeCall(gw, app, `sip:${username}@127.0.0.1`, answerPath, '/hangup');
  const ws = await bot.connection(index);
  // Past the first half second (the answer's first packets), 1.5 s of what the device sends.
  await until(() => ws.payloads('inbound').length >= 100, 15_000);
  return ws;
}

/** Whether the stream's inbound track carries `hz` 20 dB above `not` over its last second. */
function strongerOnInbound(ws: StreamConnection, hz: number, not: number): boolean {
  const bytes = Buffer.concat(ws.payloads('inbound').slice(-50));
  const pcm = new Int16Array(bytes.length >> 1);
  for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2);
  return powerAt(pcm, 16000, hz) > powerAt(pcm, 16000, not) * 100;
}
