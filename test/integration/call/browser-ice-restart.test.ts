import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserUserSetup,
  startBrowserPhone,
  type BrowserPhone,
} from '../../support/browser-phone.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';

/**
 * A browser or mobile SDK whose network changed restarts ICE (RFC 8445 9): it re-INVITEs with
 * new ICE credentials, and the gateway answers with new ones of its own (RFC 8839, JSEP),
 * keeps the DTLS association and its keys, and carries the call on over whatever pair the
 * browser nominates next. sip.js in headless Chromium does the restart the way an application
 * does (RTCPeerConnection's iceRestart offer); consent is short here, so a call whose checks
 * the gateway stopped answering would end within the test.
 */
const CONSENT_SECONDS = 4;

let gw: TestGateway;
let app: ClientApp;
let phone: BrowserPhone;

const iceOf = (sdp: string | null) => ({
  ufrag: /a=ice-ufrag:(\S+)/.exec(sdp ?? '')?.[1],
  pwd: /a=ice-pwd:(\S+)/.exec(sdp ?? '')?.[1],
});

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({
    listen: true,
    env: { VOXGATE_ICE_CONSENT_TIMEOUT: String(CONSENT_SECONDS) },
  });
  const { token } = await browserUserSetup(gw, app, 'restarting browsers', 'roaming-agent');
  phone = await startBrowserPhone({ toneHz: 700 });
  const wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
  await phone.register(wsUrl, 'sip:roaming-agent@127.0.0.1', token);
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await gw?.close();
  await app?.close();
});

describe('a browser restarting ICE mid-call', () => {
  it('gets new credentials in the answer, and the call goes on with audio both ways past the consent timeout', async () => {
    app.serve('/answer', {
      body:
        '<Response>' +
        `<GetDigits action="${app.baseUrl}/digits" method="POST" numDigits="1" timeout="60">` +
        '<Speak loop="30">Your call is important to us. Please hold the line.</Speak>' +
        '</GetDigits>' +
        '</Response>',
    });
    app.serve('/digits', { body: '<Response><Hangup/></Response>' });
    const outcome = await phone.call('sip:support@127.0.0.1');
    expect(outcome).toMatchObject({ status: 200, answered: true });
    await until(async () => (await phone.sessionStates()).includes('Established'), 10_000, 50);
    expect((await phone.listen(1500)).levelDbfs).toBeGreaterThan(-45);

    const restart = await phone.restartIce();
    expect(restart.status).toBe(200);
    // The browser restarted: new credentials in its offer.
    expect(iceOf(restart.offer).ufrag).toBeDefined();
    expect(iceOf(restart.offer).ufrag).not.toBe(iceOf(outcome.offer).ufrag);
    // The gateway's answer carries new credentials of its own, and the same certificate.
    const before = iceOf(outcome.answer);
    const after = iceOf(restart.answer);
    expect(after.ufrag).toMatch(/^[A-Za-z0-9+/]{4,}$/);
    expect(after.ufrag).not.toBe(before.ufrag);
    expect(after.pwd).not.toBe(before.pwd);
    const fingerprint = (sdp: string | null) => /a=fingerprint:(.+)/.exec(sdp ?? '')?.[1];
    expect(fingerprint(restart.answer)).toBe(fingerprint(outcome.answer));

    // ICE connects again under the new credentials; the call outlives the consent timeout
    // (the gateway answers the browser's checks), and audio still flows both ways.
    await until(
      async () => ['connected', 'completed'].includes((await phone.iceState()) ?? ''),
      10_000,
      50,
    );
    await new Promise((resolve) => setTimeout(resolve, (CONSENT_SECONDS + 2) * 1000));
    expect(app.requestsTo('/hangup')).toHaveLength(0);
    expect(await phone.sessionStates()).not.toContain('Terminated');
    const speech = await phone.listen(1500);
    expect(speech.levelDbfs).toBeGreaterThan(-45);
    expect(speech.dominantHz).toBeLessThan(4000);

    expect(await phone.sendDtmf('5')).toBe(true);
    await until(() => app.requestsTo('/digits').length === 1, 10_000);
    expect(app.requestsTo('/digits')[0]!.params).toMatchObject({ Digits: '5' });
    await until(() => app.requestsTo('/hangup').length === 1, 20_000);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
      CallStatus: 'completed',
      HangupCauseCode: '4000',
    });
    expect(phone.consoleErrors).toEqual([]);
  }, 60_000);
});
