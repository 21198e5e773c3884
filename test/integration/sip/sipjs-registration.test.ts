import { Registerer, RegistererState, UserAgent } from 'sip.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';

/**
 * sip.js, a real SIP-over-WebSocket client (RFC 7118), registering with the gateway: once with
 * an endpoint's digest credentials, once with a bearer token from `JWT/Token/` (RFC 8898).
 */
let gw: TestGateway;
let wsUrl: string;
const saved = Object.getOwnPropertyDescriptor(globalThis, 'WebSocket');
/** Every WebSocket message sip.js sent and received, as text. */
const frames: { sent: string[]; received: string[] } = { sent: [], received: [] };

/** The ws client, as sip.js finds it on globalThis, keeping a copy of what passes. */
class RecordedWebSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args);
    this.on('message', (data) => frames.received.push(String(data)));
    const send = this.send.bind(this) as (...args: unknown[]) => void;
    this.send = ((data: unknown, ...rest: unknown[]) => {
      frames.sent.push(String(data));
      send(data, ...rest);
    }) as WebSocket['send'];
  }
}

beforeAll(async () => {
  Object.defineProperty(globalThis, 'WebSocket', { value: RecordedWebSocket, configurable: true });
  gw = await startGateway({ listen: true });
  wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
});

afterAll(async () => {
  await gw.close();
  if (saved) Object.defineProperty(globalThis, 'WebSocket', saved);
  else Reflect.deleteProperty(globalThis, 'WebSocket');
});

async function registerWith(
  ua: UserAgent,
  extraHeaders: string[] = [],
): Promise<{ registerer: Registerer; states: RegistererState[] }> {
  await ua.start();
  const registerer = new Registerer(ua, { extraHeaders });
  const states: RegistererState[] = [];
  registerer.stateChange.addListener((state) => states.push(state));
  await registerer.register();
  await until(
    () =>
      states.includes(RegistererState.Registered) || states.includes(RegistererState.Unregistered),
    5000,
  ).catch(() => {});
  return { registerer, states };
}

describe('sip.js registers over WebSocket', () => {
  it('with digest credentials: the endpoint shows registered, then unregistered after stop', async () => {
    const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
      json: { username: 'webphone', password: 'web-secret-1', alias: 'web' },
    });
    const username = created.body.username as string;
    const ua = new UserAgent({
      uri: UserAgent.makeURI(`sip:${username}@127.0.0.1`),
      transportOptions: { server: wsUrl },
      authorizationUsername: username,
      authorizationPassword: 'web-secret-1',
      logBuiltinEnabled: false,
    });
    frames.sent.length = 0;
    frames.received.length = 0;
    const { states } = await registerWith(ua);
    expect(states).toContain(RegistererState.Registered);
    // Over WebSocket the 401 offers SHA-256 first (RFC 8760 order) and MD5 last. sip.js 0.21
    // keeps the last WWW-Authenticate header and knows only MD5, so it answers MD5.
    const challenge = frames.received.find((f) => f.startsWith('SIP/2.0 401'))!;
    expect(challenge.match(/^WWW-Authenticate: .*algorithm=[\w-]+/gm)).toEqual([
      expect.stringMatching(/algorithm=SHA-256$/),
      expect.stringMatching(/algorithm=MD5$/),
    ]);
    const answered = frames.sent
      .map((f) => /^Authorization: Digest .*$/m.exec(f)?.[0])
      .filter((line) => line !== undefined);
    expect(answered.length).toBeGreaterThan(0);
    expect(answered.every((line) => /algorithm=MD5\b/.test(line!))).toBe(true);
    const view = async () =>
      (await gw.request('GET', `/v1/Account/${gw.main.id}/Endpoint/${created.body.endpoint_id}/`))
        .body;
    expect(await view()).toMatchObject({
      sip_registered: 'true',
      sip_user_agent: expect.stringMatching(/^SIP\.js/),
    });
    expect((await view()).sip_contact).toMatch(/transport=ws/);
    await ua.stop();
    await until(async () => (await view()).sip_registered === 'false', 5000, 20);
  });

  it('with a bearer token that allows incoming calls', async () => {
    const token = await gw.request('POST', `/v1/Account/${gw.main.id}/JWT/Token/`, {
      json: {
        iss: gw.main.id,
        sub: 'agent-7',
        per: { voice: { incoming_allow: true, outgoing_allow: false } },
      },
    });
    expect(token.status).toBe(200);
    const ua = new UserAgent({
      uri: UserAgent.makeURI('sip:agent-7@127.0.0.1'),
      transportOptions: { server: wsUrl },
      logBuiltinEnabled: false,
    });
    gw.gateway.sip.setTrace(true);
    const { states } = await registerWith(ua, [`Authorization: Bearer ${token.body.token}`]);
    gw.gateway.sip.setTrace(false);
    expect(states).toContain(RegistererState.Registered);
    // The trace shows the REGISTER, never the token it carried.
    const traced = gw.logs.filter((line) => line.includes('SIP received'));
    expect(traced.some((line) => line.includes('REGISTER sip:'))).toBe(true);
    expect(traced.some((line) => line.includes('Authorization: <redacted>'))).toBe(true);
    expect(gw.logs.join('\n')).not.toContain(token.body.token);
    const stored = await gw.gateway.state.registrations.get(
      gw.main.id,
      `token:${gw.main.id}:agent-7`,
    );
    expect(stored?.bindings[0]).toMatchObject({ protocol: 'WS' });
    await ua.stop();
  });

  it('refuses a bearer token without incoming_allow (403 insufficient_scope)', async () => {
    const token = await gw.request('POST', `/v1/Account/${gw.main.id}/JWT/Token/`, {
      json: {
        iss: gw.main.id,
        sub: 'agent-8',
        per: { voice: { incoming_allow: false, outgoing_allow: true } },
      },
    });
    const ua = new UserAgent({
      uri: UserAgent.makeURI('sip:agent-8@127.0.0.1'),
      transportOptions: { server: wsUrl },
      logBuiltinEnabled: false,
    });
    const { states } = await registerWith(ua, [`Authorization: Bearer ${token.body.token}`]);
    expect(states).not.toContain(RegistererState.Registered);
    expect(
      await gw.gateway.state.registrations.get(gw.main.id, `token:${gw.main.id}:agent-8`),
    ).toBeNull();
    const refusals = gw.logs
      .map((line) => JSON.parse(line))
      .filter((e) => e.msg === 'REGISTER refused');
    expect(refusals.map((e) => e.reason)).toContain('token does not allow incoming calls');
    await ua.stop();
  });
});
