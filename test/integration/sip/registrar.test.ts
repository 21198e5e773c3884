import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerDigestChallenge } from '../../../src/sip/auth/digest-client.js';
import { SipResponse } from '../../../src/sip/message/index.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RawUdpPeer } from '../../support/sip-client.js';

let gw: TestGateway;
let sipPort: number;
let peer: RawUdpPeer;
let endpoint: { id: string; username: string };
const password = 'correct-horse';
let cseq = 1;

beforeAll(async () => {
  gw = await startGateway({
    listen: true,
    env: {
      VOXGATE_SIP_MIN_EXPIRES: '2',
      VOXGATE_SIP_NONCE_LIFETIME: '1',
      // Both algorithms over UDP, as a deployment may ask (the default is MD5 alone).
      VOXGATE_SIP_DIGEST_ALGORITHMS: 'SHA-256,MD5',
    },
  });
  sipPort = gw.gateway.sip.addresses.udp.port;
  peer = await RawUdpPeer.open();
  const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
    json: { username: 'alice', password, alias: 'alice-phone' },
  });
  endpoint = { id: res.body.endpoint_id, username: res.body.username };
});

afterAll(async () => {
  peer.close();
  await gw.close();
});

function register(options: {
  contact?: string;
  expires?: number | null;
  authorization?: string;
  callId?: string;
  user?: string;
  /** More header lines (Path, Supported). */
  headers?: string[];
}): string {
  const user = options.user ?? endpoint.username;
  const contact = options.contact ?? `<sip:${user}@127.0.0.1:${peer.port}>`;
  return [
    `REGISTER sip:127.0.0.1:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK${Math.random().toString(36).slice(2)};rport`,
    'Max-Forwards: 70',
    `From: <sip:${user}@127.0.0.1>;tag=reg1`,
    `To: <sip:${user}@127.0.0.1>`,
    `Call-ID: ${options.callId ?? 'registrar-test'}`,
    `CSeq: ${cseq++} REGISTER`,
    `Contact: ${contact}`,
    ...(options.expires === null ? [] : [`Expires: ${options.expires ?? 60}`]),
    'User-Agent: voxgate-test/1',
    ...(options.authorization ? [`Authorization: ${options.authorization}`] : []),
    ...(options.headers ?? []),
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

async function exchange(text: string): Promise<SipResponse> {
  const before = peer.received.length;
  peer.send(text, sipPort);
  const response = (await peer.waitFor(before + 1))[before];
  if (!(response instanceof SipResponse)) throw new Error('expected a response');
  return response;
}

/** REGISTER, take the challenge of `algorithm`, answer it with `secret`. */
async function authenticated(
  options: Parameters<typeof register>[0] & { secret?: string; algorithm?: string } = {},
): Promise<SipResponse> {
  const challenge = await exchange(register(options));
  expect(challenge.status).toBe(401);
  const offer = challenge
    .wwwAuthenticate()
    .find((c) => c.params.get('algorithm') === (options.algorithm ?? 'SHA-256'))!;
  const authorization = answerDigestChallenge(
    {
      realm: offer.params.get('realm')!,
      nonce: offer.params.get('nonce')!,
      opaque: offer.params.get('opaque'),
      algorithm: offer.params.get('algorithm'),
      qop: offer.params.get('qop'),
    },
    { username: options.user ?? endpoint.username, password: options.secret ?? password },
    { method: 'REGISTER', uri: `sip:127.0.0.1:${sipPort}` },
  )!;
  return exchange(register({ ...options, authorization }));
}

const endpointView = async () =>
  (await gw.request('GET', `/v1/Account/${gw.main.id}/Endpoint/${endpoint.id}/`)).body;

describe('the registrar', () => {
  it('challenges with SHA-256 first, then MD5, both qop=auth, when configured so (RFC 8760)', async () => {
    const challenge = await exchange(register({}));
    expect(challenge.status).toBe(401);
    const offers = challenge.wwwAuthenticate();
    expect(offers.map((c) => c.params.get('algorithm'))).toEqual(['SHA-256', 'MD5']);
    expect(offers.every((c) => c.params.get('qop') === 'auth')).toBe(true);
    expect(offers.every((c) => c.params.get('realm') === 'voxgate')).toBe(true);
    expect((await endpointView()).sip_registered).toBe('false');
  });

  it('binds a contact with SHA-256 and the endpoint shows it registered', async () => {
    const ok = await authenticated({ expires: 120 });
    expect(ok.status).toBe(200);
    const contacts = ok.contact();
    expect(contacts).not.toBe('*');
    expect(
      (contacts as { params: ReadonlyMap<string, string | null> }[])[0]!.params.get('expires'),
    ).toBe('120');
    const view = await endpointView();
    expect(view).toMatchObject({
      sip_registered: 'true',
      sip_contact: `sip:${endpoint.username}@127.0.0.1:${peer.port}`,
      sip_user_agent: 'voxgate-test/1',
    });
    expect(view.sip_expires).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  it('binds with MD5 too, and holds several contacts of one AOR', async () => {
    const ok = await authenticated({
      algorithm: 'MD5',
      contact: `<sip:${endpoint.username}@127.0.0.1:5999;transport=tcp>`,
      callId: 'second-device',
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.getRows('Contact')).toHaveLength(2);
  });

  it('answers a wrong password with a fresh challenge and leaves the bindings alone', async () => {
    const refused = await authenticated({ secret: 'wrong-password', callId: 'intruder' });
    expect(refused.status).toBe(401);
    expect(refused.wwwAuthenticate()[0]!.params.has('stale')).toBe(false);
    expect((await endpointView()).sip_registered).toBe('true');
  });

  it('answers an interval below the minimum with 423 and Min-Expires', async () => {
    const brief = await authenticated({ expires: 1, callId: 'brief' });
    expect(brief.status).toBe(423);
    expect(brief.headers.get('Min-Expires')).toBe('2');
  });

  it('answers a right digest on an expired nonce with a stale=true challenge', async () => {
    const challenge = await exchange(register({}));
    const offer = challenge.wwwAuthenticate()[0]!;
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const authorization = answerDigestChallenge(
      {
        realm: 'voxgate',
        nonce: offer.params.get('nonce')!,
        opaque: offer.params.get('opaque'),
        algorithm: offer.params.get('algorithm'),
        qop: offer.params.get('qop'),
      },
      { username: endpoint.username, password },
      { method: 'REGISTER', uri: `sip:127.0.0.1:${sipPort}` },
    )!;
    const stale = await exchange(register({ authorization }));
    expect(stale.status).toBe(401);
    expect(stale.wwwAuthenticate()[0]!.params.get('stale')).toBe('true');
  });

  it('unregisters with Contact * and Expires 0', async () => {
    const ok = await authenticated({ contact: '*', expires: 0, callId: 'wipe' });
    expect(ok.status).toBe(200);
    expect(ok.headers.getRows('Contact')).toEqual([]);
    expect((await endpointView()).sip_registered).toBe('false');
  });

  it('drops a binding when it expires, back to unregistered', async () => {
    expect((await authenticated({ expires: 2, callId: 'short' })).status).toBe(200);
    expect((await endpointView()).sip_registered).toBe('true');
    await new Promise((resolve) => setTimeout(resolve, 2300));
    expect((await endpointView()).sip_registered).toBe('false');
    const stored = await gw.gateway.state.registrations.get(gw.main.id, `endpoint:${endpoint.id}`);
    expect(stored).toBeNull();
  });

  describe('Path (RFC 3327)', () => {
    const proxy = '<sip:127.0.0.1:5070;lr;received=sip:192.0.2.7:41000>';
    const edge = '<sip:edge.example.net;lr>';
    const storedPath = async () =>
      (
        await gw.gateway.state.registrations.get(gw.main.id, `endpoint:${endpoint.id}`)
      )?.bindings.map((b) => b.path);

    it('stores the Path values with the binding and echoes them to a UA that supports path', async () => {
      const ok = await authenticated({
        callId: 'behind-proxies',
        headers: [`Path: ${proxy}`, `Path: ${edge}`, 'Supported: path'],
      });
      expect(ok.status).toBe(200);
      expect(ok.headers.getAll('Path')).toEqual([proxy, edge]);
      expect(await storedPath()).toEqual([[proxy, edge]]);
    });

    it('stores them for a UA that did not say it supports path, without echoing them', async () => {
      const ok = await authenticated({
        callId: 'behind-proxies',
        headers: [`Path: ${proxy}, ${edge}`],
      });
      expect(ok.status).toBe(200);
      expect(ok.headers.has('Path')).toBe(false);
      expect(await storedPath()).toEqual([[proxy, edge]]);
    });

    it('keeps no Path for a contact refreshed without one', async () => {
      const ok = await authenticated({ callId: 'behind-proxies' });
      expect(ok.status).toBe(200);
      expect(await storedPath()).toEqual([[]]);
    });

    it('accepts Require: path, and refuses a Path that is not a SIP URI with 400', async () => {
      const required = await authenticated({
        callId: 'behind-proxies',
        headers: [`Path: ${proxy}`, 'Require: path', 'Supported: path'],
      });
      expect(required.status).toBe(200);
      const refused = await authenticated({
        callId: 'behind-proxies',
        headers: ['Path: <mailto:proxy@example.net>'],
      });
      expect(refused.status).toBe(400);
      expect(await storedPath()).toEqual([[proxy]]);
      await authenticated({ contact: '*', expires: 0, callId: 'behind-proxies' });
    });
  });

  it('refuses a REGISTER whose To is not a SIP address of record', async () => {
    const text = register({}).replace(/^To: .*$/m, 'To: <isbn:2983792873>');
    const refused = await exchange(text);
    expect(refused.status).toBe(400);
  });
});
