import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipRequest } from '../../../src/sip/message/index.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { RawUdpPeer } from '../../support/sip-client.js';
import { startSippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/** What the gateway puts on the wire for POST Call/: the INVITE a carrier receives. */
let gw: TestGateway;
let app: ClientApp;
let carrier: RawUdpPeer;

beforeAll(async () => {
  app = await ClientApp.start();
  carrier = await RawUdpPeer.open();
  gw = await startGateway({
    listen: true,
    env: { VOXGATE_CARRIER_URI: `sip:127.0.0.1:${carrier.port}` },
  });
});

afterAll(async () => {
  await gw.close();
  await app.close();
  carrier.close();
});

const base = () => `/v1/Account/${gw.main.id}/Call/`;

/** The carrier answers an INVITE 486 Busy Here. */
function busy(invite: SipRequest): void {
  carrier.send(
    [
      'SIP/2.0 486 Busy Here',
      `Via: ${invite.headers.getRows('Via')[0]}`,
      `From: ${invite.headers.get('From')}`,
      `To: ${invite.headers.get('To')};tag=busy1`,
      `Call-ID: ${invite.callId()}`,
      `CSeq: ${invite.headers.get('CSeq')}`,
      'Content-Length: 0',
      '',
      '',
    ].join('\n'),
    gw.gateway.sip.addresses.udp.port,
  );
}

describe('the INVITE of an outbound call', () => {
  it('goes to the carrier for a number, with caller_name and the X-PH- headers, reserved ones dropped', async () => {
    const res = await gw.request('POST', base(), {
      json: {
        from: '+14155550100',
        to: '+14155550111',
        caller_name: 'Front Desk',
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
        sip_headers:
          'Team=blue,PH-Secret=x,FS-Var=y,SipAuthThing=z,ZT-Tag=w,ClientRegion=eu,Ticket=42',
      },
    });
    expect(res.status).toBe(201);
    await until(() => carrier.received.some((m) => 'method' in m && m.method === 'INVITE'), 5000);
    const invite = carrier.received.find(
      (m) => 'method' in m && m.method === 'INVITE',
    ) as SipRequest;
    expect(invite.requestUri().raw).toBe(`sip:+14155550111@127.0.0.1:${carrier.port}`);
    expect(invite.from().displayName).toBe('Front Desk');
    expect(invite.from().uri.raw).toMatch(/^sip:\+14155550100@/);
    expect(invite.headers.get('X-PH-Team')).toBe('blue');
    expect(invite.headers.get('X-PH-Ticket')).toBe('42');
    const text = invite.toString();
    for (const reserved of ['PH-Secret', 'FS-Var', 'SipAuthThing', 'ZT-Tag', 'ClientRegion']) {
      expect(text).not.toContain(reserved);
    }
    expect(invite.headers.get('Content-Type')).toBe('application/sdp');
    expect(invite.body.toString()).toMatch(/m=audio \d+ RTP\/AVP 0 8 101/);
    // Busy: the call ends 3010, with its record.
    busy(invite);
    await until(() => app.requestsTo('/hangup').length > 0, 5000);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({ HangupCauseCode: '3010' });
  });

  it('refuses a missing parent with error_if_parent_not_found, and places the call without it', async () => {
    const parent = '5a2b9f1e-8c3d-4e6f-9a1b-2c3d4e5f6a7b';
    const json = {
      from: '+14155550100',
      to: '+14155550112',
      answer_url: `${app.baseUrl}/answer`,
      parent_call_uuid: parent,
    };
    const refused = await gw.request('POST', base(), {
      json: { ...json, error_if_parent_not_found: true },
    });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toBe(`parent call ${parent} not found`);
    expect((await gw.request('POST', base(), { json })).status).toBe(201);
  });

  it("finds a main account's call as a subaccount's parent only with parent_auth_id naming it", async () => {
    const placed = await gw.request('POST', base(), {
      json: { from: '+14155550100', to: '+14155550113', answer_url: `${app.baseUrl}/answer` },
    });
    expect(placed.status).toBe(201);
    let parent = '';
    await until(async () => {
      const live = await gw.request('GET', `${base()}?status=live`);
      parent = live.body.calls?.[0] ?? '';
      return parent !== '';
    }, 5000);
    const sub = await gw.subaccount('desk');
    const json = {
      from: '+14155550100',
      to: '+14155550114',
      answer_url: `${app.baseUrl}/answer`,
      parent_call_uuid: parent,
      error_if_parent_not_found: true,
    };
    const path = `/v1/Account/${sub.id}/Call/`;
    const alone = await gw.request('POST', path, { as: sub, json });
    expect(alone.status).toBe(404);
    expect(alone.body.error).toBe(`parent call ${parent} not found`);
    const other = await gw.request('POST', path, {
      as: sub,
      json: { ...json, parent_auth_id: 'MA00000000000000OTHER' },
    });
    expect(other.status).toBe(404);
    const named = await gw.request('POST', path, {
      as: sub,
      json: { ...json, parent_auth_id: gw.main.id },
    });
    expect(named.status).toBe(201);

    // A sibling subaccount's call is not the main account's own: still not found.
    const sibling = await gw.subaccount('sibling');
    const siblings = await gw.request('POST', `/v1/Account/${sibling.id}/Call/`, {
      as: sibling,
      json: { from: '+14155550100', to: '+14155550115', answer_url: `${app.baseUrl}/answer` },
    });
    expect(siblings.status).toBe(201);
    let siblingCall = '';
    await until(async () => {
      const live = await gw.request('GET', `/v1/Account/${sibling.id}/Call/?status=live`, {
        as: sibling,
      });
      siblingCall = live.body.calls?.[0] ?? '';
      return siblingCall !== '';
    }, 5000);
    const sneaky = await gw.request('POST', path, {
      as: sub,
      json: { ...json, parent_call_uuid: siblingCall, parent_auth_id: gw.main.id },
    });
    expect(sneaky.status).toBe(404);
    expect(sneaky.body.error).toBe(`parent call ${siblingCall} not found`);
  });

  it("puts Dial's callerId and callerName in each B leg's From, a Number's own callerId first", async () => {
    const media = await RtpPeer.open();
    const aCarrier = await startSippUas({
      scenario: 'carrier-answer.xml',
      variables: { rtp_port: String(media.port) },
    });
    try {
      app.serve('/answer', {
        body: `<Response><Dial callerId="+14155550177" callerName="Help Line" timeout="3"><Number callerId="+14155550188">+14155550199</Number><User>sip:bob@127.0.0.1:${carrier.port}</User></Dial></Response>`,
      });
      const seen = carrier.received.length;
      const hangups = app.requestsTo('/hangup').length;
      const res = await gw.request('POST', base(), {
        json: {
          from: '+14155550100',
          to: `sip:alice@127.0.0.1:${aCarrier.port}`,
          caller_name: 'Front Desk',
          answer_url: `${app.baseUrl}/answer`,
          hangup_url: `${app.baseUrl}/hangup`,
        },
      });
      expect(res.status).toBe(201);
      // Only this call's B legs: earlier tests' unanswered INVITEs are still retransmitted.
      const number = `sip:+14155550199@127.0.0.1:${carrier.port}`;
      const user = `sip:bob@127.0.0.1:${carrier.port}`;
      const inviteTo = (target: string) =>
        carrier.received
          .slice(seen)
          .find(
            (m): m is SipRequest =>
              'method' in m && m.method === 'INVITE' && m.requestUri().raw === target,
          );
      await until(() => inviteTo(number) !== undefined && inviteTo(user) !== undefined, 8000);
      expect(inviteTo(number)!.from()).toMatchObject({ displayName: 'Help Line' });
      expect(inviteTo(number)!.from().uri.raw).toMatch(/^sip:\+14155550188@/);
      expect(inviteTo(user)!.from()).toMatchObject({ displayName: 'Help Line' });
      expect(inviteTo(user)!.from().uri.raw).toMatch(/^sip:\+14155550177@/);
      // Both busy: the Dial ends, the caller's call runs off the end of its document.
      busy(inviteTo(number)!);
      busy(inviteTo(user)!);
      await until(() => app.requestsTo('/hangup').length > hangups, 8000);
    } finally {
      await aCarrier.stop();
      await media.close();
    }
  }, 20_000);
});
