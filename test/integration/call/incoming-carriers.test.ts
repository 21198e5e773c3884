import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SipResponse } from '../../../src/sip/message/index.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RawUdpPeer } from '../../support/sip-client.js';
import { until } from '../../support/wait.js';

/**
 * IncomingCarrier/ as the public API has it, and what it guards: a number's calls are taken
 * from its carrier's IP set alone (VOXGATE_INBOUND_CARRIERS=enforce, the default). The carrier
 * is a bare SIP caller on 127.0.0.1; a stranger sends the same INVITE from 127.0.0.2, another
 * loopback address outside the set.
 */
const NUMBER = '14155550160';

let gw: TestGateway;
let app: ClientApp;
const peers: RawUdpPeer[] = [];

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true, env: { VOXGATE_INBOUND_CARRIERS: 'enforce' } });
  app.serve('/answer', { body: '<Response><Hangup/></Response>' });
});

afterEach(() => {
  for (const peer of peers.splice(0)) peer.close();
});

afterAll(async () => {
  await gw?.close();
  await app?.close();
});

const base = () => `/v1/Account/${gw.main.id}`;

async function createCarrier(name: string, ipSet: string): Promise<string> {
  const res = await gw.request('POST', `${base()}/IncomingCarrier/`, {
    json: { name, ip_set: ipSet },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.carrier_id as string;
}

/** An INVITE to the number from `host`; resolves to the final response it got. */
async function callFrom(host: string, callId: string): Promise<SipResponse> {
  const peer = await RawUdpPeer.open(host);
  peers.push(peer);
  peer.sendInvite({
    user: NUMBER,
    port: gw.gateway.sip.addresses.udp.port,
    from: '14155559999',
    callId,
  });
  await until(() => peer.finalResponse() !== undefined, 10_000);
  return peer.finalResponse()!;
}

describe('IncomingCarrier/', () => {
  it('is created, read, listed, changed and deleted with the fields of the public API', async () => {
    const id = await createCarrier('Carrier Inc', '127.0.0.1, 192.0.2.0/24,2001:db8::/32');
    expect(id).toMatch(/^\d{14}$/);
    const got = await gw.request('GET', `${base()}/IncomingCarrier/${id}/`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      api_id: expect.any(String),
      carrier_id: id,
      name: 'Carrier Inc',
      ip_set: '127.0.0.1,192.0.2.0/24,2001:db8::/32',
      voice: true,
      sms: false,
      resource_uri: `/v1/Account/${gw.main.id}/IncomingCarrier/${id}/`,
    });
    const changed = await gw.request('POST', `${base()}/IncomingCarrier/${id}/`, {
      json: { name: 'Carrier Inc (EU)', ip_set: '198.51.100.7' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ api_id: expect.any(String), message: 'changed' });
    const listed = await gw.request('GET', `${base()}/IncomingCarrier/?limit=5`);
    expect(listed.body.meta).toMatchObject({ total_count: 1, limit: 5, offset: 0 });
    expect(listed.body.objects).toEqual([
      expect.objectContaining({ carrier_id: id, name: 'Carrier Inc (EU)', ip_set: '198.51.100.7' }),
    ]);
    expect((await gw.request('DELETE', `${base()}/IncomingCarrier/${id}/`)).status).toBe(204);
    expect((await gw.request('GET', `${base()}/IncomingCarrier/${id}/`)).status).toBe(404);
  });

  it('refuses a bad IP set (400 naming the entry) and a missing field, storing nothing', async () => {
    const bad = await gw.request('POST', `${base()}/IncomingCarrier/`, {
      json: { name: 'Bad', ip_set: '127.0.0.1,10.0.0.0/33' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(
      'invalid ip_set: 10.0.0.0/33 is not an IP address or a CIDR range (like 192.0.2.0/24)',
    );
    const missing = await gw.request('POST', `${base()}/IncomingCarrier/`, {
      json: { name: 'No set' },
    });
    expect(missing.status).toBe(422);
    expect(JSON.stringify(missing.body)).toContain('ip_set');
    const listed = await gw.request('GET', `${base()}/IncomingCarrier/`);
    expect(listed.body.meta.total_count).toBe(0);
  });
});

describe("a number's calls, with the check enforced", () => {
  it("takes a number only with an IncomingCarrier's carrier_id, and keeps a carrier a number names", async () => {
    const label = await gw.request('POST', `${base()}/Number/`, {
      json: { numbers: NUMBER, carrier: 'local', region: 'r' },
    });
    expect(label.status).toBe(400);
    expect(label.body.error).toMatch(
      /^invalid carrier: local is not the carrier_id of an IncomingCarrier of this account/,
    );
    const id = await createCarrier('Loopback Carrier', '127.0.0.1');
    const application = await gw.request('POST', `${base()}/Application/`, {
      json: { app_name: 'carrier calls', answer_url: `${app.baseUrl}/answer` },
    });
    const added = await gw.request('POST', `${base()}/Number/`, {
      json: { numbers: NUMBER, carrier: id, region: 'r', app_id: application.body.app_id },
    });
    expect(added.status).toBe(201);
    const held = await gw.request('DELETE', `${base()}/IncomingCarrier/${id}/`);
    expect(held.status).toBe(409);
    expect(held.body.error).toContain(`carries 1 number(s) (${NUMBER})`);
  });

  it('are taken from an address of the carrier and refused 403 from any other, with a warn line', async () => {
    // The answer URL also hears each call's hangup (no hangup_url is set), whenever it comes:
    // the calls that reached the application are its StartApp requests.
    const started = () => app.requestsTo('/answer').filter((r) => r.params.Event === 'StartApp');
    const taken = await callFrom('127.0.0.1', 'carrier-call-1');
    expect(taken.status).toBeLessThan(300);
    await until(() => started().length > 0, 10_000);
    expect(started()[0]!.params).toMatchObject({ To: NUMBER });

    const refused = await callFrom('127.0.0.2', 'stranger-call-1');
    expect(refused.status).toBe(403);
    expect(started()).toHaveLength(1);
    const warnings = gw.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'call to a number refused: not from its carrier');
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        source: '127.0.0.2',
        number: NUMBER,
        reason: expect.stringMatching(
          /^127\.0\.0\.2 is not in the IP set of IncomingCarrier \d{14}/,
        ),
      }),
    ]);
  });
});
