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
 * A user registered from several places (browser tabs, a laptop and a phone) is rung on all
 * of them at once, as a forking proxy would ring them (RFC 3261 16.6): the first to answer
 * takes the call and the others stop ringing (CANCEL); one that answered in the same moment
 * gets a BYE. One that is busy leaves the others ringing; a decline (6xx) stops them all.
 */
let setup: TokenClientGateway;
let gw: TestGateway;
let app: ClientApp;

beforeAll(async () => {
  setup = await startTokenClientGateway();
  ({ gw, app } = setup);
  app.serve('/hold', { body: '<Response><Wait length="60"/></Response>' });
});

afterAll(() => setup.close());

/** `count` clients registered for `sub`, each with a Contact of its own. */
async function registered(sub: string, onInvite: WsSipTokenClient['onInvite'][]) {
  const token = await mintToken(gw, gw.main, sub);
  return Promise.all(
    onInvite.map(async (mode, i) => {
      const c = await setup.client(mode);
      const contact = `sip:${sub}-${i}@tab-${i}.invalid;transport=ws`;
      expect(await c.register(sub, token, { contact })).toBe(200);
      return c;
    }),
  );
}

const requests = (c: WsSipTokenClient, method: string): SipRequest[] =>
  c.received.filter((r) => r.method === method);

/** Places a call to `sub`; resolves with the hangup callback's parameters once it ended. */
async function place(sub: string, hangupPath: string, more: Record<string, unknown> = {}) {
  const placed = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
    json: {
      from: '+14155550100',
      to: `sip:${sub}@127.0.0.1`,
      answer_url: `${app.baseUrl}/hold`,
      hangup_url: `${app.baseUrl}${hangupPath}`,
      ...more,
    },
  });
  expect(placed.status).toBe(201);
}

const hangupOf = async (path: string) => {
  await until(() => app.requestsTo(path).length === 1, 10_000);
  return app.requestsTo(path)[0]!.params;
};

describe('a user registered in several places', () => {
  it('rings them all; the one that answers has the call, and the other stops ringing', async () => {
    const [ringer, answerer] = await registered('everywhere', ['ring', 'answer']);
    const answeredBefore = app.requestsTo('/hold').length;
    await place('everywhere', '/hangup-everywhere');
    await until(() => app.requestsTo('/hold').length > answeredBefore, 5000);
    const uuid = app.requestsTo('/hold').at(-1)!.params.CallUUID!;
    expect(requests(ringer!, 'INVITE')).toHaveLength(1);
    expect(requests(answerer!, 'INVITE')).toHaveLength(1);
    // One offer for both.
    expect(requests(ringer!, 'INVITE')[0]!.body.toString()).toBe(
      requests(answerer!, 'INVITE')[0]!.body.toString(),
    );
    await until(() => requests(ringer!, 'CANCEL').length === 1, 5000);

    const res = await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
    expect(res.status).toBe(204);
    await until(() => requests(answerer!, 'BYE').length === 1, 5000);
    expect(requests(ringer!, 'BYE')).toHaveLength(0);
    expect(await hangupOf('/hangup-everywhere')).toMatchObject({ CallStatus: 'completed' });
  }, 20_000);

  it('keeps ringing the others when one is busy, and ends busy only when all are', async () => {
    const [busy, answerer] = await registered('half-busy', ['busy', 'answer']);
    await place('half-busy', '/hangup-half-busy');
    await until(() => requests(answerer!, 'ACK').length === 1, 5000);
    expect(requests(busy!, 'INVITE')).toHaveLength(1);

    await registered('all-busy', ['busy', 'busy']);
    await place('all-busy', '/hangup-all-busy');
    expect(await hangupOf('/hangup-all-busy')).toMatchObject({
      CallStatus: 'busy',
      HangupCause: 'Busy Line',
    });
  }, 20_000);

  it('ends as the busy one said soon after, not 32 s later, when the other says nothing at all', async () => {
    await registered('half-open', ['silent', 'busy']);
    const placedAt = Date.now();
    await place('half-open', '/hangup-half-open');
    expect(await hangupOf('/hangup-half-open')).toMatchObject({
      CallStatus: 'busy',
      HangupCause: 'Busy Line',
    });
    expect(Date.now() - placedAt).toBeLessThan(10_000);
  }, 20_000);

  it('stops ringing them all at a decline from one', async () => {
    const [ringer, decliner] = await registered('declines', ['ring', 'decline']);
    await place('declines', '/hangup-declines');
    await until(() => requests(ringer!, 'CANCEL').length === 1, 5000);
    expect(requests(decliner!, 'INVITE')).toHaveLength(1);
    const ended = await hangupOf('/hangup-declines');
    expect(ended.CallStatus).toBe('failed');
    expect(ended.HangupCause).toBe('Rejected');
  }, 20_000);

  it('stops ringing them all when nobody answers within the ring timeout', async () => {
    const both = await registered('nobody-home', ['ring', 'ring']);
    await place('nobody-home', '/hangup-nobody', { ring_timeout: 2 });
    const ended = await hangupOf('/hangup-nobody');
    expect(ended).toMatchObject({ CallStatus: 'no-answer', HangupCause: 'Ring Timeout Reached' });
    for (const c of both) expect(requests(c, 'CANCEL')).toHaveLength(1);
  }, 20_000);

  it('rings the callable ones when a registration holds a Contact that is no SIP URI', async () => {
    const token = await mintToken(gw, gw.main, 'odd-contact');
    const answerer = await setup.client('answer');
    const odd = await setup.client();
    expect(await answerer.register('odd-contact', token)).toBe(200);
    // Bound last, for longer: the newest registration, and one no INVITE can go to.
    expect(
      await odd.register('odd-contact', token, { contact: 'tel:+15551230000', expires: 600 }),
    ).toBe(200);
    const answeredBefore = app.requestsTo('/hold').length;
    await place('odd-contact', '/hangup-odd');
    await until(() => app.requestsTo('/hold').length > answeredBefore, 5000);
    expect(requests(answerer, 'INVITE')).toHaveLength(1);
    const uuid = app.requestsTo('/hold').at(-1)!.params.CallUUID!;
    expect((await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`)).status).toBe(
      204,
    );
    expect(await hangupOf('/hangup-odd')).toMatchObject({ CallStatus: 'completed' });
  }, 20_000);

  it('sends a BYE to the one whose answer came second', async () => {
    const both = await registered('both-answer', ['answer', 'answer']);
    const answeredBefore = app.requestsTo('/hold').length;
    await place('both-answer', '/hangup-both');
    await until(() => app.requestsTo('/hold').length > answeredBefore, 5000);
    await until(() => both.some((c) => requests(c, 'BYE').length === 1), 5000);
    const loser = both.find((c) => requests(c, 'BYE').length === 1)!;
    const winner = both.find((c) => c !== loser)!;
    expect(requests(winner, 'BYE')).toHaveLength(0);
    expect(app.requestsTo('/hold').length).toBe(answeredBefore + 1);
    const uuid = app.requestsTo('/hold').at(-1)!.params.CallUUID!;
    expect((await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`)).status).toBe(
      204,
    );
    await until(() => requests(winner, 'BYE').length === 1, 5000);
  }, 20_000);
});

describe('sip.js registered twice for one endpoint', () => {
  it('rings both phones; both answer, one keeps the call and the other is hung up', async () => {
    const giveBack = lendWebSocketGlobal();
    const { username, phones } = await endpointPhones(gw, setup.wsUrl, 'twophones', 2);
    try {
      for (const phone of phones) await phone.register();
      const answeredBefore = app.requestsTo('/hold').length;
      await place(username, '/hangup-sipjs');
      await until(() => app.requestsTo('/hold').length > answeredBefore, 5000);
      for (const phone of phones) await until(() => phone.invites.length === 1, 5000);
      // Both accepted: one session stays up, the other is terminated by the gateway.
      await until(() => phones.some((p) => p.calls[0]!.includes(SessionState.Terminated)), 5000);
      const kept = phones.find((p) => !p.calls[0]!.includes(SessionState.Terminated))!;
      expect(kept.calls[0]).toContain(SessionState.Established);
      const uuid = app.requestsTo('/hold').at(-1)!.params.CallUUID!;
      await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
      await until(() => kept.calls[0]!.includes(SessionState.Terminated), 5000);
    } finally {
      await Promise.all(phones.map((p) => p.stop()));
      giveBack();
    }
  }, 30_000);
});
