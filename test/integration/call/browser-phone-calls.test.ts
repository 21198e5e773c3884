import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import type { IncomingInvite } from '../../../src/sip/ua/incoming-invite.js';
import {
  browserUserSetup,
  startBrowserPhone,
  type BrowserPhone,
  placeCall,
} from '../../support/browser-phone.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { strongestFrequency, tone } from '../../support/signal.js';
import { openSipPeer, type SipPeer } from '../../support/sip-peer.js';
import { until } from '../../support/wait.js';

/**
 * What a phone does, a browser does: sip.js in headless Chromium (its fake microphone playing
 * 700 Hz), registered over WebSocket with a token from JWT/Token/, calls the account's endpoint
 * application with WebRTC media (ICE-lite, DTLS-SRTP, Opus). It hears an IVR's Speak and
 * answers GetDigits with an RFC 4733 digit from its RTCDTMFSender; it Dials a number through
 * the carrier (a SIP user agent of the test, its media plain PCMU); and when it vanishes
 * without a word (its processes stopped: no BYE, no DTLS alert, no more ICE checks), the call
 * ends on consent expiry with a record that says so.
 */
const CONSENT_SECONDS = 3;

let gw: TestGateway;
let app: ClientApp;
let carrier: SipPeer;
let carrierMedia: RtpPeer;
let phone: BrowserPhone;

const pcmuAnswer = (port: number) =>
  `v=0\r\no=carrier 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n` +
  `m=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;

beforeAll(async () => {
  app = await ClientApp.start();
  carrier = await openSipPeer();
  carrierMedia = await RtpPeer.open();
  gw = await startGateway({
    listen: true,
    env: {
      VOXGATE_CARRIER_URI: `sip:127.0.0.1:${carrier.port}`,
      VOXGATE_ICE_CONSENT_TIMEOUT: String(CONSENT_SECONDS),
    },
  });
  const { token } = await browserUserSetup(gw, app, 'browser phones', 'web-agent');
  phone = await startBrowserPhone({ toneHz: 700 });
  const wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
  await phone.register(wsUrl, 'sip:web-agent@127.0.0.1', token);
}, 60_000);

afterEach(async () => {
  carrier.uas.onInvite = null;
  app.reset();
});

afterAll(async () => {
  await phone?.close();
  await gw?.close();
  await app?.close();
  await carrierMedia?.close();
  await carrier?.stack.close();
});

/** Places the browser's call and waits for its media (the page's session established). */
async function browserCalls(target: string): Promise<void> {
  const outcome = await phone.call(target);
  expect(outcome).toMatchObject({ status: 200, answered: true });
  await until(async () => (await phone.sessionStates()).includes('Established'), 10_000, 50);
}

describe('a browser phone (sip.js in Chromium, WebRTC media) calling through the gateway', () => {
  it('hears an IVR speak and answers GetDigits with an RFC 4733 digit', async () => {
    app.serve('/answer', {
      body:
        '<Response>' +
        `<GetDigits action="${app.baseUrl}/digits" method="POST" numDigits="1" timeout="20">` +
        '<Speak loop="5">Please press the key of the department you want to reach.</Speak>' +
        '</GetDigits>' +
        '</Response>',
    });
    app.serve('/digits', { body: '<Response><Hangup/></Response>' });
    await browserCalls('sip:ivr@127.0.0.1');

    // Speech (espeak-ng through Opus and SRTP) reaches the page's WebAudio analyser.
    const speech = await phone.listen(1500);
    expect(speech.levelDbfs).toBeGreaterThan(-45);
    expect(speech.dominantHz).toBeGreaterThan(80);
    expect(speech.dominantHz).toBeLessThan(4000);
    expect(app.requestsTo('/digits')).toHaveLength(0);

    expect(await phone.sendDtmf('7')).toBe(true);
    await until(() => app.requestsTo('/digits').length === 1, 10_000);
    expect(app.requestsTo('/digits')[0]!.params).toMatchObject({ Digits: '7' });
    // The action's Hangup ends it: the browser hears a BYE.
    expect(await app.hangupOf('/answer')).toMatchObject({
      CallStatus: 'completed',
      HangupCauseCode: '4000',
      HangupSource: 'Answer XML',
      Direction: 'inbound',
    });
    await until(async () => (await phone.sessionStates()).includes('Terminated'), 5000, 50);
    expect(phone.consoleErrors).toEqual([]);
  }, 60_000);

  it('Dials a number through the carrier: Opus on its side, PCMU on the carrier, heard at both ends', async () => {
    let offer: string | null = null;
    let byes = 0;
    carrier.uas.onInvite = (invite: IncomingInvite) => {
      offer = invite.offer;
      invite.ring();
      const dialog = invite.answer(pcmuAnswer(carrierMedia.port));
      dialog.delegate = {
        onTerminated: (end) => void (end.kind === 'bye' && end.by === 'remote' && byes++),
      };
    };
    app.serve('/answer', {
      body: '<Response><Dial callerId="+14155550100"><Number>+14155550199</Number></Dial></Response>',
    });
    await browserCalls('sip:+14155550199@127.0.0.1');
    await until(() => offer !== null, 10_000);
    const gatewayPort = Number(/^m=audio (\d+) RTP\/AVP /m.exec(offer!)![1]);
    expect(offer).toMatch(/^a=rtpmap:0 PCMU\/8000/m);

    // The carrier's phone says 500 Hz in PCMU; the browser hears it through Opus.
    const back = muLawEncode(tone(8000, 500, 4, 8000));
    const frames = Array.from({ length: 200 }, (_, i) => back.subarray(i * 160, i * 160 + 160));
    const speaking = carrierMedia.stream(gatewayPort, frames, { payloadType: 0 });
    await until(() => carrierMedia.received.length >= 100, 10_000);
    const heard = await phone.listen(1500);
    await speaking;

    expect(Math.abs(heard.dominantHz - 500)).toBeLessThan(15);
    // The browser's 700 Hz reached the carrier as PCMU.
    const pcmu = carrierMedia.received.filter((p) => p.payloadType === 0);
    expect(pcmu.length).toBeGreaterThan(100);
    const audio = muLawDecode(Buffer.concat(pcmu.slice(-50).map((p) => p.payload)));
    expect(strongestFrequency(audio, 8000, 10)).toBe(700);

    await phone.hangUp();
    const params = await app.hangupOf('/answer');
    expect(params).toMatchObject({
      CallStatus: 'completed',
      HangupCauseCode: '4000',
      HangupSource: 'Caller',
    });
    await until(() => byes === 1, 5000);
    // The browser's leg is billed: its record has a duration and an amount.
    const record = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${params.CallUUID}/`);
    expect(record.status).toBe(200);
    expect(Number(record.body.bill_duration)).toBeGreaterThanOrEqual(1);
    expect(record.body).toMatchObject({ hangup_cause_code: 4000, call_direction: 'inbound' });
    expect(phone.consoleErrors).toEqual([]);
  }, 60_000);

  it('is rung by a phone call that Dials its endpoint, answers after ringing longer than the consent timeout, restarts ICE, and carries audio both ways', async () => {
    let byes = 0;
    let carrierSdp: string | null = null;
    carrier.uas.onInvite = (invite: IncomingInvite) => {
      carrierSdp = invite.offer;
      invite.ring();
      const dialog = invite.answer(pcmuAnswer(carrierMedia.port));
      dialog.delegate = {
        onTerminated: (end) => void (end.kind === 'bye' && end.by === 'remote' && byes++),
      };
    };
    app.serve('/phone-answer', {
      body: '<Response><Dial><User>sip:web-agent@127.0.0.1</User></Dial></Response>',
    });
    await placeCall(gw, app, '+14155550142', '/phone-answer', '/hangup');
    // The phone answered; its answer document rings the browser with a WebRTC offer. The
    // browser runs no ICE before its user answers: it rings longer than the consent timeout,
    // which must not count before then.
    const ringing = await phone.ringing(15_000);
    expect(ringing.offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
    await new Promise((resolve) => setTimeout(resolve, CONSENT_SECONDS * 1000 + 1500));
    await phone.answer(1000);
    await until(async () => (await phone.sessionStates()).includes('Established'), 10_000, 50);
    const gatewayPort = Number(/^m=audio (\d+) RTP\/AVP /m.exec(carrierSdp!)![1]);

    // The browser answered active, so the gateway is the DTLS server. Its re-INVITE (an ICE
    // restart) offers actpass, as browsers do: the association carries on, so the answer keeps
    // the gateway the server; Chromium refuses an answer that would reverse the roles.
    const restart = await phone.restartIce();
    expect(restart.status).toBe(200);
    expect(restart.offer).toMatch(/^a=setup:actpass/m);
    expect(restart.answer).toMatch(/^a=setup:passive/m);
    await until(
      async () => ['connected', 'completed'].includes((await phone.iceState()) ?? ''),
      10_000,
      50,
    );

    const back = muLawEncode(tone(8000, 500, 4, 8000));
    const frames = Array.from({ length: 200 }, (_, i) => back.subarray(i * 160, i * 160 + 160));
    const before = carrierMedia.received.length;
    const speaking = carrierMedia.stream(gatewayPort, frames, { payloadType: 0 });
    await until(() => carrierMedia.received.length - before >= 100, 10_000);
    const heard = await phone.listen(1500);
    await speaking;
    expect(Math.abs(heard.dominantHz - 500)).toBeLessThan(15);
    const pcmu = carrierMedia.received.slice(before).filter((p) => p.payloadType === 0);
    const audio = muLawDecode(Buffer.concat(pcmu.slice(-50).map((p) => p.payload)));
    expect(strongestFrequency(audio, 8000, 10)).toBe(700);

    // The browser hangs up: the Dial ends, and with it the phone's call.
    await phone.hangUp();
    await until(() => byes === 1, 10_000);
    expect(await app.hangupOf('/phone-answer')).toMatchObject({
      CallStatus: 'completed',
      Direction: 'outbound',
    });
    expect(phone.consoleErrors).toEqual([]);
  }, 60_000);

  it('is spoken to by live call control, and ends 6020 on consent expiry when it vanishes without a BYE', async () => {
    app.serve('/answer', { body: '<Response><Wait length="60"/></Response>' });
    await browserCalls('sip:hold@127.0.0.1');
    // Live control reaches a browser as it does a phone: silence, then the Speak it was sent.
    const uuid = app.requestsTo('/answer')[0]!.params.CallUUID!;
    expect((await phone.listen(600)).levelDbfs).toBeLessThan(-60);
    const speak = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/${uuid}/Speak/`, {
      json: { text: 'An agent will be with you shortly. Thank you for waiting.', loop: 'true' },
    });
    expect(speak.status).toBe(200);
    expect((await phone.listen(1200)).levelDbfs).toBeGreaterThan(-45);

    const stopped = chromiumProcesses(phone);
    const vanishedAt = Date.now();
    signal(stopped, 'STOP');
    try {
      const params = await app.hangupOf('/answer');
      const after = Date.now() - vanishedAt;
      expect(params).toMatchObject({
        CallStatus: 'completed',
        HangupCauseCode: '6020',
        HangupCauseName: 'Media Timeout',
        HangupSource: 'Error',
      });
      // Consent lasts CONSENT_SECONDS after the last check (a check every ~5 s or less).
      expect(after).toBeGreaterThanOrEqual(CONSENT_SECONDS * 1000 - 1000);
      const ended = gw.logs
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((entry) => entry.msg === 'WebRTC media ended' && entry.callUuid === uuid);
      expect(ended).toEqual([
        expect.objectContaining({ reason: expect.stringMatching(/consent/) }),
      ]);
      const record = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${params.CallUUID}/`);
      expect(record.status).toBe(200);
      expect(record.body).toMatchObject({ hangup_cause_code: 6020, hangup_source: 'Error' });
    } finally {
      signal(stopped, 'CONT');
    }
  }, 60_000);
});

/** Chromium's processes: the browser and every process under it (renderers, network, GPU). */
function chromiumProcesses(browserPhone: BrowserPhone): number[] {
  const root = browserPhone.page.browser().process()?.pid;
  if (root === undefined) throw new Error('the browser runs in no child process of the test');
  const all: number[] = [root];
  for (let i = 0; i < all.length; i++) all.push(...childrenOf(all[i]!));
  return all;
}

function childrenOf(pid: number): number[] {
  try {
    const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
    return out
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map(Number);
  } catch {
    // ps answers 1 for a process without children.
    return [];
  }
}

function signal(pids: readonly number[], name: 'STOP' | 'CONT'): void {
  for (const pid of pids) {
    try {
      process.kill(pid, `SIG${name}`);
    } catch {
      // Gone already.
    }
  }
}
