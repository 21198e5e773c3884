import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeCall, startBrowserPhone, type BrowserPhone } from '../../support/browser-phone.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';

/**
 * Two browser tabs (sip.js in two headless Chromiums) registered for one token subject: a call
 * to it rings both with one WebRTC offer; the tab that answers gets the call's audio (ICE and
 * DTLS with it alone), and the other stops ringing (CANCEL). A tab whose WebSocket drops mid-call
 * connects and registers again: its audio goes on, and the hangup's BYE reaches it there.
 */
let gw: TestGateway;
let app: ClientApp;
const tabs: BrowserPhone[] = [];

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
  const minted = await gw.request('POST', `/v1/Account/${gw.main.id}/JWT/Token/`, {
    json: { sub: 'two-tabs', per: { voice: { incoming_allow: true, outgoing_allow: true } } },
  });
  expect(minted.status).toBe(200);
  const wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
  for (const toneHz of [600, 900]) {
    const tab = await startBrowserPhone({ toneHz });
    tabs.push(tab);
    await tab.register(wsUrl, 'sip:two-tabs@127.0.0.1', minted.body.token as string);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(tabs.map((tab) => tab.close()));
  await gw?.close();
  await app?.close();
});

/** Places a call to the tabs' user, whose application speaks `words` over and over. */
async function callTabs(words: string): Promise<void> {
  app.reset();
  app.serve('/answer', { body: `<Response><Speak loop="10">${words}</Speak></Response>` });
  await placeCall(gw, app, 'sip:two-tabs@127.0.0.1', '/answer');
}

describe('a user with two browser tabs', () => {
  it('rings both; the tab that answers hears the call, and the other stops ringing', async () => {
    await callTabs('Thank you for calling. An agent will be with you shortly.');
    const [left, right] = tabs as [BrowserPhone, BrowserPhone];
    const offers = await Promise.all(tabs.map((tab) => tab.ringing(10_000)));
    expect(offers[0]!.offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
    expect(offers[1]!.offer).toBe(offers[0]!.offer);

    await right.answer(1000);
    await until(async () => (await right.sessionStates()).includes('Established'), 10_000, 50);
    await until(async () => (await left.ringingState()) === 'Terminated', 10_000, 50);
    await until(
      async () => ['connected', 'completed'].includes((await right.iceState()) ?? ''),
      10_000,
      50,
    );
    const speech = await right.listen(1500);
    expect(speech.levelDbfs).toBeGreaterThan(-45);
    expect(await left.sessionStates()).toEqual([]);
    expect(right.consoleErrors).toEqual([]);
    expect(left.consoleErrors).toEqual([]);
  }, 60_000);

  it('keeps its call, audio and hangup included, when the answering tab connects again', async () => {
    await callTabs('Please hold while we find an agent for you.');
    const [left, right] = tabs as [BrowserPhone, BrowserPhone];
    await left.ringing(10_000);
    await right.answer(10_000);
    await until(async () => (await right.sessionStates()).includes('Established'), 10_000, 50);
    await until(() => app.requestsTo('/answer').length === 1, 5000);
    const uuid = app.requestsTo('/answer')[0]!.params.CallUUID!;

    // A network change: its WebSocket goes without a word, and it connects and registers again.
    expect((await right.reconnect()).status).toBe(200);
    const speech = await right.listen(1500);
    expect(speech.levelDbfs).toBeGreaterThan(-45);
    // The hangup's BYE reaches it on its new connection.
    const res = await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
    expect(res.status).toBe(204);
    await until(async () => (await right.sessionStates()).includes('Terminated'), 10_000, 50);
    expect(right.consoleErrors).toEqual([]);
  }, 60_000);
});
