import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientApp } from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';
import {
  mintToken,
  startTokenClientGateway,
  type TokenClientGateway,
} from '../../support/ws-sip-token-client.js';

/**
 * A browser or SDK client with an access token, over SIP over WebSocket. Its registration binds
 * the token's own subject, for no longer than the token is valid: a client that asks for an hour
 * with a token of minutes is bound for those minutes (and registers again with a new token); one
 * that names another user in To is refused. Its calls run the application the token names.
 * And when its connection closes while a call to it rings, the call ends then, not 32 s on.
 */
let setup: TokenClientGateway;
let gw: TestGateway;
let app: ClientApp;

beforeAll(async () => {
  setup = await startTokenClientGateway();
  ({ gw, app } = setup);
});

afterAll(() => setup.close());

const client = () => setup.client();

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
    c.onInvite = 'ring';
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

describe("a call from a token's client", () => {
  it("runs the application the token names, the account's default without one, and is refused once that one is gone", async () => {
    const create = async (name: string, path: string, fallback: boolean) => {
      app.serve(path, { body: '<Response><Hangup/></Response>' });
      const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
        json: {
          app_name: name,
          answer_url: `${app.baseUrl}${path}`,
          ...(fallback && { default_endpoint_app: true }),
        },
      });
      expect(res.status).toBe(201);
      return res.body.app_id as string;
    };
    // Without a hangup_url, the hangup callback goes to the answer URL too: count the starts.
    const started = (path: string) =>
      app.requestsTo(path).filter((r) => r.params.Event === 'StartApp');
    await create('endpoints', '/default-app', true);
    const named = await create('sales desk', '/named-app', false);
    const caller = await client();

    const withApp = await mintToken(gw, gw.main, 'seller', undefined, named);
    expect((await caller.invite('seller', 'desk', withApp)).status).toBeLessThan(300);
    await until(() => started('/named-app').length === 1, 5000);
    expect(started('/default-app')).toHaveLength(0);

    const without = await mintToken(gw, gw.main, 'seller');
    expect((await caller.invite('seller', 'desk', without)).status).toBeLessThan(300);
    await until(() => started('/default-app').length === 1, 5000);
    expect(started('/named-app')).toHaveLength(1);

    expect(
      (await gw.request('DELETE', `/v1/Account/${gw.main.id}/Application/${named}/`)).status,
    ).toBe(204);
    const refused = await caller.invite('seller', 'desk', withApp);
    expect(refused.status).toBe(480);
    expect(refused.reason).toBe(`No Application (the token's app ${named} is not in its account)`);
    expect(started('/default-app')).toHaveLength(1);
  }, 30_000);
});
