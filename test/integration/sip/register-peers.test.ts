import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip } from '../../support/baresip.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { endpointRows, runSipp, type SipTransport } from '../../support/sipp.js';

/**
 * Real SIP clients against the gateway's registrar: SIPp's REGISTER scenarios (digest over UDP
 * and TCP, a wrong password, a stale nonce, OPTIONS) and baresip, each with endpoints made
 * through the REST API. The endpoint records then show what the registrar bound.
 */
let gw: TestGateway;
let target: { host: string; port: number };
const endpoints: { id: string; username: string; password: string }[] = [];

beforeAll(async () => {
  gw = await startGateway({ listen: true, env: { VOXGATE_SIP_NONCE_LIFETIME: '1' } });
  target = { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port };
  for (const [name, password] of [
    ['alice', 'alice-secret'],
    ['bob', 'b0b:p@ss"word'],
    ['carol', 'carol-secret'],
  ] as const) {
    const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
      json: { username: name, password, alias: name },
    });
    endpoints.push({ id: res.body.endpoint_id, username: res.body.username, password });
  }
});

afterAll(async () => {
  await gw.close();
});

const view = async (id: string) =>
  (await gw.request('GET', `/v1/Account/${gw.main.id}/Endpoint/${id}/`)).body;

describe('SIPp against the registrar', () => {
  it.each<SipTransport>(['udp', 'tcp'])(
    'registers endpoints over %s with digest (after the 401), and unregisters a contact',
    async (transport) => {
      await gw.gateway.state.registrations
        .get(gw.main.id, `endpoint:${endpoints[0]!.id}`)
        .then((r) => r && gw.gateway.state.registrations.remove(r));
      const [alice, bob] = endpoints;
      const registered = await runSipp({
        scenario: 'register-digest.xml',
        target,
        transport,
        injectCsv: endpointRows([alice!, bob!]),
        calls: 2,
        timeoutMs: 20_000,
      });
      expect(registered.errors).toEqual([]);
      expect(registered).toMatchObject({ outcome: 'all-succeeded', successful: 2, failed: 0 });
      const shown = await view(alice!.id);
      expect(shown).toMatchObject({
        sip_registered: 'true',
        sip_user_agent: 'voxgate-harness (SIPp)',
      });
      expect(shown.sip_contact).toMatch(/^sip:alice\d+@127\.0\.0\.1:\d+/);

      const unregistered = await runSipp({
        scenario: 'register-digest.xml',
        target,
        transport,
        injectCsv: endpointRows([alice!, bob!]),
        variables: { unregister: 'yes' },
        calls: 2,
        timeoutMs: 20_000,
      });
      expect(unregistered).toMatchObject({ outcome: 'all-succeeded', successful: 2 });
      // The second run bound its own contact and removed it (Expires: 0): only the first
      // run's binding is left.
      const stored = await gw.gateway.state.registrations.get(gw.main.id, `endpoint:${alice!.id}`);
      expect(stored?.bindings.map((b) => b.contact)).toEqual([shown.sip_contact]);
    },
  );

  it('challenges a wrong password again, and the right one then registers', async () => {
    const result = await runSipp({
      scenario: 'register-wrong-password.xml',
      target,
      injectCsv: endpointRows([endpoints[2]!]),
      calls: 1,
      traceMessages: true,
      timeoutMs: 20_000,
    });
    expect(result.errors).toEqual([]);
    expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 1 });
    const refusals = gw.logs.map((l) => JSON.parse(l)).filter((e) => e.msg === 'REGISTER refused');
    expect(refusals.map((e) => e.reason)).toContain('wrong response (bad password)');
    expect(gw.logs.join('\n')).not.toContain('carol-secret');
    expect((await view(endpoints[2]!.id)).sip_registered).toBe('true');
  });

  it('answers a right digest on an expired nonce with stale=true, then registers', async () => {
    const result = await runSipp({
      scenario: 'register-stale-nonce.xml',
      target,
      injectCsv: endpointRows([endpoints[1]!]),
      variables: { nonce_wait_ms: '2500' },
      calls: 1,
      traceMessages: true,
      timeoutMs: 20_000,
    });
    expect(result.errors).toEqual([]);
    expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 1 });
    expect(result.messages).toMatch(/^WWW-Authenticate: Digest .*stale=true/m);
  });

  it('gets 200 to OPTIONS', async () => {
    const result = await runSipp({ scenario: 'options.xml', target, calls: 3, timeoutMs: 10_000 });
    expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 3, failed: 0 });
  });
});

/** The WWW-Authenticate lines of the 401s the gateway sent, from its SIP trace. */
function challengesSent(logs: string[]): string[][] {
  return logs
    .map((line) => JSON.parse(line))
    .filter((e) => e.msg === 'SIP sent' && String(e.message).startsWith('SIP/2.0 401'))
    .map((e) => String(e.message).match(/^WWW-Authenticate: .*$/gm) ?? []);
}

describe('SIPp with an unmodified -au/-ap REGISTER scenario', () => {
  const plainRegister = (transport: SipTransport, endpoint: (typeof endpoints)[number]) =>
    runSipp({
      scenario: 'register-auth.xml',
      target,
      transport,
      extraArgs: ['-s', endpoint.username, '-au', endpoint.username, '-ap', endpoint.password],
      calls: 1,
      traceMessages: true,
      timeoutMs: 20_000,
    });

  it.each<SipTransport>(['udp', 'tcp'])(
    'registers over %s with no configuration: the 401 carries MD5 alone',
    async (transport) => {
      const carol = endpoints[2]!;
      const result = await plainRegister(transport, carol);
      expect(result.errors).toEqual([]);
      expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 1, failed: 0 });
      const offered = result.messages.match(/^WWW-Authenticate: .*$/gm) ?? [];
      expect(offered.length).toBeGreaterThan(0);
      expect(offered.every((line) => /algorithm=MD5,/.test(line))).toBe(true);
      expect(result.messages).toMatch(/^Authorization: Digest .*algorithm=MD5/m);
      expect(await view(carol.id)).toMatchObject({
        sip_registered: 'true',
        sip_user_agent: 'SIPp',
      });
    },
  );

  it('aborts its run when SHA-256 is offered first, as the gateway once did by default', async () => {
    const strict = await startGateway({
      listen: true,
      env: { VOXGATE_SIP_DIGEST_ALGORITHMS: 'SHA-256,MD5' },
    });
    try {
      const res = await strict.request('POST', `/v1/Account/${strict.main.id}/Endpoint/`, {
        json: { username: 'erin', password: 'erin-secret', alias: 'erin' },
      });
      const erin = { id: '', username: res.body.username as string, password: 'erin-secret' };
      const result = await runSipp({
        scenario: 'register-auth.xml',
        target: { host: '127.0.0.1', port: strict.gateway.sip.addresses.udp.port },
        extraArgs: ['-s', erin.username, '-au', erin.username, '-ap', erin.password],
        calls: 1,
        timeoutMs: 20_000,
      });
      expect(result.outcome).toBe('fatal');
      expect(`${result.errors.join('\n')}${result.stderr}${result.screen}`).toContain(
        'authentication must use MD5 or AKAv1-MD5',
      );
    } finally {
      await strict.close();
    }
  });
});

describe('baresip against the registrar', () => {
  it('registers over UDP with no configuration, and unregisters on exit', async () => {
    // Nonces live their default 5 minutes here: baresip unregisters on exit with the nonce
    // it already holds, and exits without waiting for a new challenge. No User-Agent list is
    // set: the default challenge over UDP is what baresip answers.
    await gw.close();
    gw = await startGateway({ listen: true, env: { VOXGATE_SIP_MD5_ONLY_AGENTS: '' } });
    target = { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port };
    gw.gateway.sip.setTrace(true);
    const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
      json: { username: 'dave', password: 'dave-secret', alias: 'dave' },
    });
    const dave = { id: res.body.endpoint_id, username: res.body.username, password: 'dave-secret' };
    const phone = await startBaresip({
      username: dave.username,
      password: dave.password,
      registrar: target,
    });
    try {
      const line = await phone.waitForRegistered();
      expect(line).toContain('200 OK');
      const shown = await view(dave.id);
      expect(shown.sip_registered).toBe('true');
      expect(shown.sip_user_agent).toMatch(/^baresip/);
      expect(shown.sip_contact).toContain(`127.0.0.1:${phone.sipPort}`);
      const challenges = challengesSent(gw.logs);
      expect(challenges.length).toBeGreaterThan(0);
      for (const offered of challenges) {
        expect(offered).toHaveLength(1);
        expect(offered[0]).toMatch(/algorithm=MD5,/);
      }
    } finally {
      await phone.stop();
      gw.gateway.sip.setTrace(false);
    }
    for (let i = 0; i < 50 && (await view(dave.id)).sip_registered === 'true'; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await view(dave.id)).sip_registered).toBe('false');
  });

  it('gives up when SHA-256 is offered too, even after MD5: no challenge order serves it', async () => {
    const ordered = await startGateway({
      listen: true,
      env: { VOXGATE_SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', VOXGATE_SIP_MD5_ONLY_AGENTS: '' },
    });
    const res = await ordered.request('POST', `/v1/Account/${ordered.main.id}/Endpoint/`, {
      json: { username: 'frank', password: 'frank-secret', alias: 'frank' },
    });
    const phone = await startBaresip({
      username: res.body.username,
      password: 'frank-secret',
      registrar: { host: '127.0.0.1', port: ordered.gateway.sip.addresses.udp.port },
    });
    try {
      await expect(phone.waitForRegistered()).rejects.toThrow(/Function not implemented/);
    } finally {
      await phone.stop();
      await ordered.close();
    }
  });
});
