import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type Credentials, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';
import { WsSipTokenClient, mintToken } from '../../support/ws-sip-token-client.js';

/**
 * Any account may mint an access token for any subject. Two tenants (the main account and a
 * subaccount, or two subaccounts) whose browsers register the same subject each keep a
 * registration of their own: a call of one reaches its own browser only, and one browser
 * leaving does not disturb the other's binding.
 */
let gw: TestGateway;
let app: ClientApp;
let wsUrl: string;

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  app = await ClientApp.start();
  app.serve('/answer', { body: '<Response><Speak>hello</Speak></Response>' });
  wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
});

afterAll(async () => {
  await gw.close();
  await app.close();
});

/** Calls `sip:<sub>@127.0.0.1` as `as`; resolves with the hangup callback's parameters. */
async function call(as: Credentials, sub: string): Promise<Record<string, string>> {
  const before = app.requestsTo('/hangup').length;
  const placed = await gw.request('POST', `/v1/Account/${as.id}/Call/`, {
    as,
    json: {
      from: '+14155550100',
      to: `sip:${sub}@127.0.0.1`,
      answer_url: `${app.baseUrl}/answer`,
      hangup_url: `${app.baseUrl}/hangup`,
    },
  });
  expect(placed.status).toBe(201);
  await until(() => app.requestsTo('/hangup').length > before, 15_000);
  return app.requestsTo('/hangup')[before]!.params;
}

const stored = async (owner: Credentials, sub: string) =>
  (await gw.gateway.state.registrations.get(gw.main.id, `token:${owner.id}:${sub}`))?.bindings ??
  [];

describe('one token subject registered by two accounts', () => {
  for (const pair of ['the main account and a subaccount', 'two subaccounts'] as const) {
    it(`keeps ${pair} apart`, async () => {
      const sub = pair === 'two subaccounts' ? 'agent-subs' : 'agent-main';
      const first = pair === 'two subaccounts' ? await gw.subaccount('first') : gw.main;
      const second = await gw.subaccount('second');
      const one = await WsSipTokenClient.connect(wsUrl);
      const two = await WsSipTokenClient.connect(wsUrl);
      try {
        expect(await one.register(sub, await mintToken(gw, first, sub))).toBe(200);
        expect(await two.register(sub, await mintToken(gw, second, sub))).toBe(200);

        // Each account's call reaches its own browser, which answers busy.
        expect(await call(first, sub)).toMatchObject({ HangupCauseName: 'Busy Line' });
        expect([one.invites().length, two.invites().length]).toEqual([1, 0]);
        expect(await call(second, sub)).toMatchObject({ HangupCauseName: 'Busy Line' });
        expect([one.invites().length, two.invites().length]).toEqual([1, 1]);
        // Two registrations, one under each account.
        expect(await stored(first, sub)).toHaveLength(1);
        expect(await stored(second, sub)).toHaveLength(1);

        // The first browser leaves: its binding goes, the second's stays where it was.
        const secondBinding = await stored(second, sub);
        await one.close();
        await until(async () => (await stored(first, sub)).length === 0, 5_000);
        expect(await stored(second, sub)).toEqual(secondBinding);
        expect(await call(second, sub)).toMatchObject({ HangupCauseName: 'Busy Line' });
        expect([one.invites().length, two.invites().length]).toEqual([1, 2]);
      } finally {
        await one.close();
        await two.close();
      }
    }, 60_000);
  }
});
