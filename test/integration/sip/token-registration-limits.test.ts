import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';
import { WsSipTokenClient, mintToken } from '../../support/ws-sip-token-client.js';

/**
 * What a token's registration may bind: the token's own subject, and for no longer than the
 * token is valid. A client that asks for an hour with a token of minutes is bound for those
 * minutes (and registers again with a new token); one that names another user in To is refused.
 */
let gw: TestGateway;
let app: ClientApp;
let wsUrl: string;
const clients: WsSipTokenClient[] = [];

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  app = await ClientApp.start();
  wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gw.close();
  await app.close();
});

async function client(): Promise<WsSipTokenClient> {
  const c = await WsSipTokenClient.connect(wsUrl);
  clients.push(c);
  return c;
}

const stored = async (sub: string) =>
  (await gw.gateway.state.registrations.get(gw.main.id, `token:${gw.main.id}:${sub}`))?.bindings ??
  [];

describe('a registration made with an access token', () => {
  it('lasts no longer than the token, whatever Expires asked for', async () => {
    const exp = Math.floor(Date.now() / 1000) + 200;
    const c = await client();
    expect(
      await c.register('short-lived', await mintToken(gw, gw.main, 'short-lived', exp), {
        expires: 3600,
      }),
    ).toBe(200);
    const contact = c.lastRegisterResponse!.headers.get('Contact') ?? '';
    const granted = Number(/;expires=(\d+)/.exec(contact)?.[1]);
    expect(granted).toBeGreaterThan(190);
    expect(granted).toBeLessThanOrEqual(200);
    const [binding] = await stored('short-lived');
    expect(binding!.expires_at).toBeLessThanOrEqual(exp * 1000);
  });

  it('is refused 403 for a To user other than the token subject, and binds nothing', async () => {
    const c = await client();
    const token = await mintToken(gw, gw.main, 'alice');
    expect(await c.register('alice', token, { to: 'bob' })).toBe(403);
    expect(c.lastRegisterResponse!.reason).toBe('Forbidden (the token registers alice, not bob)');
    expect(await stored('alice')).toEqual([]);
    expect(await stored('bob')).toEqual([]);
    // The same token registers its own subject.
    expect(await c.register('alice', token)).toBe(200);
    expect(await stored('alice')).toHaveLength(1);
  });
});

describe('a browser whose connection closes while its call rings', () => {
  it('ends the call at once, not when the INVITE times out 32 s later', async () => {
    const c = await client();
    c.ringOnly = true;
    expect(await c.register('ringer', await mintToken(gw, gw.main, 'ringer'))).toBe(200);
    const placed = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: 'sip:ringer@127.0.0.1',
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    expect(placed.status).toBe(201);
    await until(() => c.invites().length === 1, 5000);
    const closedAt = Date.now();
    await c.close();
    await until(() => app.requestsTo('/hangup').length === 1, 10_000);
    expect(Date.now() - closedAt).toBeLessThan(5000);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({ CallStatus: 'failed' });
  }, 30_000);
});
