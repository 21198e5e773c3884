import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../../src/state/records.js';
import { ClientApp } from '../../support/client-app.js';
import { startDnsServer } from '../../support/dns-server.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { runSipp, startSippUas, type SippResult, type SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * Inbound trunking: a SIPp carrier calls a number on a trunk; SIPp PBXs stand at the trunk's
 * primary and fallback origination URIs (answering, refusing, challenging, or a socket that
 * never answers), found by IP, by port, or through DNS SRV from a responder on loopback.
 */
let gw: TestGateway;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let silent: Socket;
let silentPort: number;
const pbxs: SippUas[] = [];
let nextNumber = 14155550200;

beforeAll(async () => {
  silent = createSocket('udp4');
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  silentPort = (silent.address() as AddressInfo).port;
  dns = await startDnsServer({});
  gw = await startGateway({
    listen: true,
    env: {
      VOXGATE_TRUNK_RESPONSE_TIMEOUT: '1',
      VOXGATE_TRUNK_PROBE_INTERVAL: '0',
      VOXGATE_DNS_SERVERS: dns.server,
    },
  });
});

afterEach(async () => {
  await Promise.all(pbxs.splice(0).map((p) => p.stop()));
});

afterAll(async () => {
  await gw.close();
  await dns.close();
  silent.close();
});

const account = () => `/v1/Account/${gw.main.id}`;

async function originationUri(uri: string, auth?: { username: string; password: string }) {
  const res = await gw.request('POST', `${account()}/SipTrunk/URI/`, {
    json: auth ? { uri, authentication_needed: true, ...auth } : { uri },
  });
  expect(res.status).toBe(201);
  return res.body.uri_uuid as string;
}

/** A trunk over these URIs and a fresh number attached to it. */
async function trunkNumber(primary: string, fallback?: string): Promise<string> {
  const trunk = await gw.request('POST', `${account()}/SipTrunk/Trunk/`, {
    json: {
      name: 'pbx',
      trunk_direction: 'inbound',
      primary_uri_uuid: primary,
      ...(fallback ? { fallback_uri_uuid: fallback } : {}),
    },
  });
  expect(trunk.status).toBe(201);
  const number = String(nextNumber++);
  const added = await gw.request('POST', `${account()}/Number/`, {
    json: { numbers: number, carrier: 'c', region: 'r', trunk_id: trunk.body.trunk_id },
  });
  expect(added.status).toBe(201);
  return number;
}

async function pbx(scenario: string, variables?: Record<string, string>): Promise<SippUas> {
  const uas = await startSippUas({ scenario, variables, traceMessages: true });
  pbxs.push(uas);
  return uas;
}

/** The carrier's call: INVITE to the number, a second of talk when answered, BYE. */
function call(number: string): Promise<SippResult> {
  return runSipp({
    scenario: 'uac-invite.xml',
    target: { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port },
    calls: 1,
    extraArgs: ['-s', number, '-d', '1000'],
    traceMessages: true,
    timeoutMs: 20_000,
  });
}

/** The records of the caller's leg and of the legs it was relayed to, once all are written. */
async function records(number: string, legs: number) {
  let found: { a: CallRecord; b: CallRecord[] } | null = null;
  await until(async () => {
    const all = await gw.gateway.state.calls.all(gw.main.id);
    const a = all.find((r) => r.to_number === number && r.call_direction === 'inbound');
    const b = a ? all.filter((r) => r.parent_call_uuid === a.call_uuid) : [];
    found = a && b.length === legs ? { a, b } : null;
    return found !== null;
  });
  return found!;
}

/** Packets carrying sound (mu-law bytes away from the silent 0xFF / 0x7F). */
const loud = (packets: { payload: Uint8Array }[]) =>
  packets.filter((p) => p.payload.some((b) => (b & 0x7f) < 0x70)).length;

const invitesTo = (result: SippResult) => result.messages.match(/^INVITE sip:\S+/gm) ?? [];

describe('a call to a number on an inbound trunk', () => {
  it('is relayed to the primary URI, answered there, and recorded on both legs', async () => {
    const primary = await pbx('uas-invite.xml');
    const number = await trunkNumber(await originationUri(`127.0.0.1:${primary.port}`));
    const calling = call(number);
    // Live while it lasts, as an inbound call to the number.
    let live: string[] = [];
    await until(async () => {
      live = (await gw.request('GET', `${account()}/Call/?status=live&call_direction=inbound`)).body
        .calls;
      return live.length > 0;
    }, 5000);
    const shown = await gw.request('GET', `${account()}/Call/${live[0]}/?status=live`);
    expect(shown.body).toMatchObject({
      direction: 'inbound',
      to: number,
    });
    expect(['ringing', 'in-progress']).toContain(shown.body.call_status);
    const result = await calling;
    expect(result.successful).toBe(1);
    const seen = await primary.stop();
    expect(invitesTo(seen)).toEqual([`INVITE sip:${number}@127.0.0.1:${primary.port}`]);
    const { a, b } = await records(number, 1);
    expect(a).toMatchObject({ call_direction: 'inbound', from_number: 'harness' });
    expect(b[0]).toMatchObject({
      call_direction: 'outbound',
      to_number: number,
      hangup_cause_name: 'Normal Hangup',
    });
    expect(b[0]!.bill_duration).toBeGreaterThan(0);
  });

  it('goes to the fallback when the primary answers 503', async () => {
    const primary = await pbx('carrier-unavailable.xml');
    const fallback = await pbx('uas-invite.xml');
    const number = await trunkNumber(
      await originationUri(`127.0.0.1:${primary.port}`),
      await originationUri(`127.0.0.1:${fallback.port}`),
    );
    expect((await call(number)).successful).toBe(1);
    expect(invitesTo(await fallback.stop())).toHaveLength(1);
    const { b } = await records(number, 2);
    expect(b.map((r) => r.hangup_cause_name).sort()).toEqual([
      'Destination Out Of Service',
      'Normal Hangup',
    ]);
  });

  it('goes to the fallback when the primary does not respond at all', async () => {
    const fallback = await pbx('uas-invite.xml');
    const number = await trunkNumber(
      await originationUri(`127.0.0.1:${silentPort}`),
      await originationUri(`127.0.0.1:${fallback.port}`),
    );
    const started = Date.now();
    expect((await call(number)).successful).toBe(1);
    // One second for the primary (VOXGATE_TRUNK_RESPONSE_TIMEOUT), not Timer B's 32.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(invitesTo(await fallback.stop())).toHaveLength(1);
  });

  it("gives the caller the PBX's own 486, and does not try the fallback", async () => {
    const primary = await pbx('carrier-busy.xml');
    const fallback = await pbx('uas-invite.xml');
    const number = await trunkNumber(
      await originationUri(`127.0.0.1:${primary.port}`),
      await originationUri(`127.0.0.1:${fallback.port}`),
    );
    const result = await call(number);
    expect(result.messages).toMatch(/^SIP\/2\.0 486 /m);
    expect(invitesTo(await fallback.stop())).toEqual([]);
    const { a } = await records(number, 1);
    expect(a).toMatchObject({ hangup_cause_name: 'Busy Line' });
  });

  it('answers the PBX’s digest challenge with the URI’s credentials', async () => {
    const primary = await pbx('carrier-auth.xml');
    const number = await trunkNumber(
      await originationUri(`127.0.0.1:${primary.port}`, {
        username: 'carrieruser',
        password: 'Carrier-Pass1',
      }),
    );
    expect((await call(number)).successful).toBe(1);
    expect((await primary.stop()).messages).toMatch(
      /^Authorization: Digest username="carrieruser"/m,
    );
  });

  it('finds an FQDN through SRV, and sends a sip:user@host URI its own user', async () => {
    const primary = await pbx('uas-invite.xml');
    const name = `pbx${nextNumber}.trunk.test`;
    dns.zone[`_sip._udp.${name}`] = {
      SRV: [{ priority: 10, weight: 1, port: primary.port, target: `media.${name}` }],
    };
    dns.zone[`media.${name}`] = { A: ['127.0.0.1'] };
    dns.zone[name] = {};
    const number = await trunkNumber(await originationUri(`sip:4000@${name}`));
    expect((await call(number)).successful).toBe(1);
    expect(invitesTo(await primary.stop())).toEqual([`INVITE sip:4000@${name}`]);
    expect(dns.queries).toContain(`SRV _sip._udp.${name}`);
  });

  it("carries the caller's audio to the PBX", async () => {
    // The caller is the gateway itself: a call placed through the API to the number's SIP URI
    // on this gateway speaks, and the trunk relays it to a PBX whose media is a test socket.
    const media = await RtpPeer.open();
    const primary = await pbx('carrier-answer.xml', { rtp_port: String(media.port) });
    const number = await trunkNumber(await originationUri(`127.0.0.1:${primary.port}`));
    const app = await ClientApp.start();
    try {
      app.serve('/answer', {
        body: '<Response><Speak>Hello from the far end of the trunk</Speak><Wait length="1"/></Response>',
      });
      const fired = await gw.request('POST', `${account()}/Call/`, {
        json: {
          from: '+14155550100',
          to: `sip:${number}@127.0.0.1:${gw.gateway.sip.addresses.udp.port}`,
          answer_url: `${app.baseUrl}/answer`,
        },
      });
      expect(fired.status).toBe(201);
      await until(() => loud(media.received) > 25, 15_000);
      // Mu-law PCMU end to end (both legs settled on it), the payload type the PBX answered.
      expect(media.received.every((p) => p.payloadType === 0 || p.payloadType === 101)).toBe(true);
      // Both legs settled on PCMU: the audio crossed undecoded.
      const connected = gw.logs.filter((l) => l.includes('trunk call connected')).at(-1)!;
      expect(JSON.parse(connected)).toMatchObject({ media: 'relay', role: 'primary' });
    } finally {
      await app.close();
      media.close();
    }
  });

  it('hangs up a PBX that answers with garbage SDP, and gives the caller 488', async () => {
    const primary = await pbx('pbx-bad-sdp.xml');
    const number = await trunkNumber(await originationUri(`127.0.0.1:${primary.port}`));
    const result = await call(number);
    expect(result.messages).toMatch(/^SIP\/2\.0 488 /m);
    const seen = await primary.stop();
    expect(seen.messages).toMatch(/^BYE sip:/m);
    const { a, b } = await records(number, 1);
    expect(a).toMatchObject({ hangup_cause_name: 'Network Error' });
    expect(b[0]).toMatchObject({ hangup_cause_name: 'Network Error', hangup_source: 'Error' });
    // The call that was fine before stays fine: another call through a sound PBX works.
    const sound = await pbx('uas-invite.xml');
    const other = await trunkNumber(await originationUri(`127.0.0.1:${sound.port}`));
    expect((await call(other)).successful).toBe(1);
  });

  it('fails with a cause naming the reason when the URIs are gone or do not resolve', async () => {
    const gone = await originationUri('127.0.0.1:5999');
    const number = await trunkNumber(gone);
    await gw.request('DELETE', `${account()}/SipTrunk/URI/${gone}/`);
    const result = await call(number);
    expect(result.messages).toMatch(/^SIP\/2\.0 404 /m);
    expect((await records(number, 0)).a).toMatchObject({ hangup_cause_name: 'Routing Error' });

    const nowhere = await trunkNumber(await originationUri('nowhere.trunk.test'));
    const refused = await call(nowhere);
    expect(refused.messages).toMatch(/^SIP\/2\.0 503 /m);
    expect((await records(nowhere, 0)).a).toMatchObject({
      hangup_cause_name: 'Destination Out Of Service',
    });
    expect(gw.logs.join('\n')).toContain('nowhere.trunk.test has no A or AAAA record');
  });
});
