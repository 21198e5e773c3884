import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserUserSetup,
  startBrowserPhone,
  type BrowserPhone,
  placeCall,
} from '../../support/browser-phone.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';

/**
 * JsSIP is the other SIP stack browser softphones are built on, and it behaves otherwise than
 * sip.js: it sends the token as its own `authorization_jwt` setting puts it, registers once its
 * WebSocket is up, offers RFC 4028 session timers in its INVITE, and sends keys as SIP INFO by
 * default. JsSIP 3 in headless Chromium (its fake microphone playing 700 Hz), registered over
 * WebSocket with a token from JWT/Token/, calls an IVR and answers GetDigits by INFO, and is
 * called by `POST Call/`. As an endpoint with a password, it answers digest challenges with
 * MD5, the last of the WebSocket 401's and the only one it knows.
 */
let gw: TestGateway;
let app: ClientApp;
let phone: BrowserPhone;

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
  const { token } = await browserUserSetup(gw, app, 'jssip phones', 'js-agent');
  phone = await startBrowserPhone({ toneHz: 700, stack: 'jssip' });
  const wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
  await phone.register(wsUrl, 'sip:js-agent@127.0.0.1', token);
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await gw?.close();
  await app?.close();
});

describe('a JsSIP phone in Chromium (WebRTC media)', () => {
  it('hears an IVR, answers GetDigits by SIP INFO, and is hung up by the action', async () => {
    app.serve('/answer', {
      body:
        '<Response>' +
        `<GetDigits action="${app.baseUrl}/digits" method="POST" numDigits="1" timeout="20">` +
        '<Speak loop="5">Please press the key of the department you want to reach.</Speak>' +
        '</GetDigits></Response>',
    });
    app.serve('/digits', { body: '<Response><Hangup/></Response>' });
    const outcome = await phone.call('sip:ivr@127.0.0.1');
    expect(outcome).toMatchObject({ status: 200, answered: true });
    expect(outcome.offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
    await until(async () => (await phone.sessionStates()).includes('Established'), 10_000, 50);

    const speech = await phone.listen(1500);
    expect(speech.levelDbfs).toBeGreaterThan(-45);
    expect(speech.dominantHz).toBeGreaterThan(80);
    expect(speech.dominantHz).toBeLessThan(4000);
    expect(app.requestsTo('/digits')).toHaveLength(0);

    expect(await phone.sendDtmf('4', 'info')).toBe(true);
    await until(() => app.requestsTo('/digits').length === 1, 10_000);
    expect(app.requestsTo('/digits')[0]!.params).toMatchObject({ Digits: '4' });
    await until(async () => (await phone.sessionStates()).includes('Terminated'), 10_000, 50);
    expect(await app.hangupOf('/answer')).toMatchObject({
      CallStatus: 'completed',
      HangupCauseCode: '4000',
      HangupSource: 'Answer XML',
    });
    expect(phone.consoleErrors).toEqual([]);
  }, 60_000);

  it('is called by POST Call/: answers the WebRTC offer, hears the answer document, hangs up', async () => {
    app.serve('/answer-out', {
      body: '<Response><Speak loop="10">Your order has shipped. Thank you.</Speak></Response>',
    });
    await placeCall(gw, app, 'sip:js-agent@127.0.0.1', '/answer-out', '/hangup');
    const ringing = await phone.ringing(15_000);
    expect(ringing.offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
    await phone.answer(1000);
    await until(async () => (await phone.sessionStates()).includes('Established'), 10_000, 50);
    const speech = await phone.listen(1500);
    expect(speech.levelDbfs).toBeGreaterThan(-45);

    await phone.hangUp();
    expect(await app.hangupOf('/answer-out')).toMatchObject({
      CallStatus: 'completed',
      HangupCauseCode: '4000',
      Direction: 'outbound',
    });
    expect(phone.consoleErrors).toEqual([]);
  }, 60_000);

  it('registers as an endpoint with its password (digest over WebSocket: SHA-256 first, MD5 last) and calls', async () => {
    const password = 'jssip-Secret9';
    const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
      json: { username: 'jsdesk', password, alias: 'jsdesk' },
    });
    expect(created.status).toBe(201);
    const username = created.body.username as string;
    const desk = await startBrowserPhone({ toneHz: 700, stack: 'jssip' });
    try {
      const wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
      // JsSIP answers the last challenge, MD5, the only one it knows.
      expect(
        await desk.registerDigest(wsUrl, `sip:${username}@127.0.0.1`, username, password),
      ).toEqual({ status: 200, reason: 'OK' });
      app.serve('/answer', { body: '<Response><Speak loop="5">Good morning.</Speak></Response>' });
      // Its INVITE is challenged too, and answered the same way.
      expect(await desk.call('sip:front-desk@127.0.0.1')).toMatchObject({
        status: 200,
        answered: true,
      });
      await until(async () => (await desk.sessionStates()).includes('Established'), 10_000, 50);
      expect((await desk.listen(1000)).levelDbfs).toBeGreaterThan(-45);
      await desk.hangUp();
      expect(desk.consoleErrors).toEqual([]);
    } finally {
      await desk.close();
    }
  }, 60_000);
});
