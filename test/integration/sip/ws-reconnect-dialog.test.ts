import { SessionState } from 'sip.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipRequest } from '../../../src/sip/message/index.js';
import type { ClientApp } from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import { endpointPhones, lendWebSocketGlobal } from '../../support/sipjs-phone.js';
import { until } from '../../support/wait.js';
import {
  mintToken,
  startTokenClientGateway,
  type TokenClientGateway,
  type WsSipTokenClient,
} from '../../support/ws-sip-token-client.js';

/**
 * A browser's call outlives its WebSocket connection: a laptop that wakes, a phone that moves
 * from Wi-Fi to mobile data, connects again (RFC 7118 gives the server no way to connect to
 * it) and registers its Contact again, or sends a request in the call on its new connection.
 * The gateway's requests in the call (here the BYE of a hangup through the API) then go on the
 * new connection, not on the old one, which may still look open (half-open after a network
 * change) or be gone. Another client of the same user (a second tab, its own Contact) does not
 * take the call over by registering.
 */
let setup: TokenClientGateway;
let gw: TestGateway;
let app: ClientApp;
let wsUrl: string;

beforeAll(async () => {
  setup = await startTokenClientGateway();
  ({ gw, app, wsUrl } = setup);
  app.serve('/hold', { body: '<Response><Wait length="60"/></Response>' });
});

afterAll(() => setup.close());

const client = (onInvite: WsSipTokenClient['onInvite'] = 'answer') => setup.client(onInvite);

const byes = (c: WsSipTokenClient): SipRequest[] => c.received.filter((r) => r.method === 'BYE');

/** Calls `sub` through the API; resolves with the call's uuid once the client answered. */
async function callTo(sub: string): Promise<string> {
  const before = app.requestsTo('/hold').length;
  const placed = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
    json: { from: '+14155550100', to: `sip:${sub}@127.0.0.1`, answer_url: `${app.baseUrl}/hold` },
  });
  expect(placed.status).toBe(201);
  await until(() => app.requestsTo('/hold').length > before, 5000);
  return app.requestsTo('/hold').at(-1)!.params.CallUUID!;
}

async function hangUp(uuid: string): Promise<void> {
  const res = await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
  expect(res.status).toBe(204);
}

describe('a call to a browser that connects again', () => {
  it('sends its BYE on the connection the browser registered again, while the old one still looks open', async () => {
    const token = await mintToken(gw, gw.main, 'roamer');
    const before = await client();
    expect(await before.register('roamer', token)).toBe(200);
    const uuid = await callTo('roamer');
    expect(before.invites()).toHaveLength(1);

    // The network changed: the old connection is never closed (no FIN reaches us).
    const after = await client();
    expect(await after.register('roamer', token)).toBe(200);
    await hangUp(uuid);
    await until(() => byes(after).length === 1, 5000);
    expect(byes(after)[0]!.callId()).toBe(before.invites()[0]!.callId());
    expect(byes(before)).toHaveLength(0);
  }, 20_000);

  it('follows the browser to the connection it sends a request of the call on', async () => {
    const token = await mintToken(gw, gw.main, 'hopper');
    const before = await client();
    expect(await before.register('hopper', token)).toBe(200);
    const uuid = await callTo('hopper');
    const invite = before.invites()[0]!;
    await before.close();

    // Connected again, it sends an OPTIONS in the call (no new REGISTER): answered there.
    const after = await client();
    const answered = after.nextResponse();
    after.send(inDialogOptions(invite));
    expect((await answered).status).toBe(200);
    await hangUp(uuid);
    await until(() => byes(after).length === 1, 5000);
    expect(byes(after)[0]!.callId()).toBe(invite.callId());
  }, 20_000);

  it('stays with its own client when another client of the user registers its Contact', async () => {
    const token = await mintToken(gw, gw.main, 'twotabs');
    const first = await client();
    expect(await first.register('twotabs', token)).toBe(200);
    const uuid = await callTo('twotabs');

    const second = await client();
    const contact = 'sip:twotabs-2@second-tab.invalid;transport=ws';
    expect(await second.register('twotabs', token, { contact })).toBe(200);
    await hangUp(uuid);
    await until(() => byes(first).length === 1, 5000);
    expect(byes(second)).toHaveLength(0);
  }, 20_000);

  it('stays with its own client when another install registers a Contact that differs only in rinstance', async () => {
    const token = await mintToken(gw, gw.main, 'installs');
    const contact = (rinstance: string) =>
      `sip:installs@shared.invalid;transport=ws;rinstance=${rinstance}`;
    const laptop = await client();
    expect(await laptop.register('installs', token, { contact: contact('laptop') })).toBe(200);
    const desktop = await client('ring');
    const uuid = await callTo('installs');
    expect(await desktop.register('installs', token, { contact: contact('desktop') })).toBe(200);
    await hangUp(uuid);
    await until(() => byes(laptop).length === 1, 5000);
    expect(byes(desktop)).toHaveLength(0);
  }, 20_000);
});

describe('a call from a browser that connects again', () => {
  it('sends its BYE on the connection the browser registered again after the old one closed', async () => {
    const path = '/from-browser';
    app.serve(path, { body: '<Response><Wait length="60"/></Response>' });
    const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: { app_name: 'reconnecting browsers', answer_url: `${app.baseUrl}${path}` },
    });
    expect(res.status).toBe(201);
    const token = await mintToken(gw, gw.main, 'dialer', undefined, res.body.app_id as string);
    const before = await client();
    expect(await before.register('dialer', token)).toBe(200);
    const answer = await before.invite('dialer', 'desk', token);
    expect(answer.status).toBe(200);
    await until(() => app.requestsTo(path).length === 1, 5000);
    const uuid = app.requestsTo(path)[0]!.params.CallUUID!;
    await before.close();

    const after = await client();
    expect(await after.register('dialer', token)).toBe(200);
    await hangUp(uuid);
    await until(() => byes(after).length === 1, 5000);
    expect(byes(after)[0]!.callId()).toBe(answer.callId());
  }, 20_000);
});

/** An OPTIONS from the callee of `invite` in its dialog (To tag `answered`, the client's). */
function inDialogOptions(invite: SipRequest): string {
  const contact = /<([^>]+)>/.exec(invite.headers.get('Contact') ?? '')?.[1] ?? invite.uri;
  return [
    `OPTIONS ${contact} SIP/2.0`,
    `Via: SIP/2.0/WS hopper.invalid;branch=z9hG4bK${Math.random().toString(36).slice(2)}`,
    'Max-Forwards: 70',
    `From: ${invite.headers.get('To')};tag=answered`,
    `To: ${invite.headers.get('From')}`,
    `Call-ID: ${invite.callId()}`,
    'CSeq: 1 OPTIONS',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

describe('sip.js that loses its connection during a call', () => {
  it('connects again, registers again, and gets the BYE of its call there', async () => {
    const giveBack = lendWebSocketGlobal();
    const { username, phones } = await endpointPhones(gw, wsUrl, 'sipjsroamer');
    const phone = phones[0]!;
    try {
      await phone.register();
      const uuid = await callTo(username);
      await until(() => phone.calls[0]?.includes(SessionState.Established) ?? false, 5000);
      await phone.reconnect();
      await hangUp(uuid);
      await until(() => phone.calls[0]!.includes(SessionState.Terminated), 5000);
    } finally {
      await phone.stop();
      giveBack();
    }
  }, 30_000);
});
