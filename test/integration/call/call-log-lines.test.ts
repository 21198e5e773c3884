import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingInvite } from '../../../src/sip/ua/incoming-invite.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { openSipPeer, type SipPeer } from '../../support/sip-peer.js';
import { until } from '../../support/wait.js';

/**
 * The log an operator follows calls by: one line when a call is created, one when it is
 * answered, one when it ends (cause, duration, ids), a warning naming why for the ends that
 * say something is wrong; and POST Call/ to a number refused when nothing could carry it.
 * The carrier is a SIP user agent on our own stack, its media a plain RTP peer.
 */
let gw: TestGateway;
let app: ClientApp;
let carrier: SipPeer;
let media: RtpPeer;

const sdp = (port: number) =>
  `v=0\r\no=carrier 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n` +
  `m=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;

beforeAll(async () => {
  app = await ClientApp.start();
  carrier = await openSipPeer();
  media = await RtpPeer.open();
  gw = await startGateway({
    listen: true,
    env: { VOXGATE_CARRIER_URI: `sip:127.0.0.1:${carrier.port}` },
  });
});

afterEach(() => {
  carrier.uas.onInvite = null;
  app.reset();
});

afterAll(async () => {
  await gw.close();
  await app.close();
  await media.close();
  await carrier.stack.close();
});

type Line = Record<string, unknown> & { level: number; msg: string };

/** The gateway's log lines about one call. */
const linesOf = (logs: string[], callUuid: string): Line[] =>
  logs.map((l) => JSON.parse(l) as Line).filter((l) => l.callUuid === callUuid);

/** Places a call (a number goes through the carrier); resolves to its hangup callback's params. */
async function placeCall(to: string, extra: Record<string, string> = {}) {
  const fired = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
    json: {
      from: '+14155550100',
      to,
      answer_url: `${app.baseUrl}/answer`,
      hangup_url: `${app.baseUrl}/hangup`,
      ...extra,
    },
  });
  expect(fired.status).toBe(201);
  await until(() => app.requestsTo('/hangup').length === 1, 15_000);
  const hangup = app.requestsTo('/hangup')[0]!.params;
  // The end's line follows its record and callback by a moment at most.
  await until(() => linesOf(gw.logs, hangup.CallUUID!).some((l) => l.msg === 'call ended'));
  return { requestUuid: fired.body.request_uuid as string, hangup };
}

describe('the log lines of a call', () => {
  it('are created, answered and ended (4010), with the ids, cause and duration', async () => {
    carrier.uas.onInvite = (invite: IncomingInvite) => {
      invite.ring();
      invite.answer(sdp(media.port));
    };
    app.serve('/answer', { body: '<Response><Wait length="1"/></Response>' });
    const { requestUuid, hangup } = await placeCall('+14155550111');
    expect(hangup.HangupCauseCode).toBe('4010');
    const uuid = hangup.CallUUID!;
    const ids = {
      callUuid: uuid,
      requestUuid,
      direction: 'outbound',
      from: '+14155550100',
      to: '+14155550111',
      authId: gw.main.id,
    };
    const lines = linesOf(gw.logs, uuid);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [30, 'call created'],
      [30, 'call answered'],
      [30, 'call ended'],
    ]);
    expect(lines[0]).toMatchObject(ids);
    expect(lines[1]).toMatchObject(ids);
    expect(lines[2]).toMatchObject({
      ...ids,
      hangupCauseCode: 4010,
      hangupCauseName: 'End Of XML Instructions',
      hangupSource: 'Answer XML',
      callStatus: 'completed',
    });
    // The Wait of one second ran between the answer and the end.
    expect(lines[2]!.duration).toBeGreaterThanOrEqual(1);
    expect(lines[2]!.totalDuration).toBeGreaterThanOrEqual(lines[2]!.duration as number);
  });

  it('warn when the callee rejects the call (3020), naming its answer', async () => {
    carrier.uas.onInvite = (invite: IncomingInvite) => invite.reject(603, 'Decline');
    const { hangup } = await placeCall('+14155550112');
    expect(hangup.HangupCauseCode).toBe('3020');
    const lines = linesOf(gw.logs, hangup.CallUUID!);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [30, 'call created'],
      [40, 'call ended'],
    ]);
    expect(lines[1]).toMatchObject({
      to: '+14155550112',
      hangupCauseCode: 3020,
      hangupCauseName: 'Rejected',
      callStatus: 'failed',
      duration: 0,
      reason: 'the far end answered 603 Decline',
    });
  });

  it('warn when the callee refuses the credentials (4240), and never show the password', async () => {
    let invites = 0;
    carrier.uas.onInvite = (invite: IncomingInvite) => {
      invites++;
      invite.reject(401, 'Unauthorized', [
        ['WWW-Authenticate', `Digest realm="carrier", nonce="n${invites}", algorithm=MD5`],
      ]);
    };
    // Credentials go only with SIP URIs: the carrier's peer reached by its address.
    const { hangup } = await placeCall(`sip:trunk@127.0.0.1:${carrier.port}`, {
      sip_auth_username: 'trunk-user',
      sip_auth_password: 'Trunk-Pass-77',
    });
    expect(hangup.HangupCauseCode).toBe('4240');
    // The INVITE, then once more with the credentials: refused again.
    expect(invites).toBe(2);
    const lines = linesOf(gw.logs, hangup.CallUUID!);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [30, 'call created'],
      [40, 'call ended'],
    ]);
    expect(lines[1]).toMatchObject({
      hangupCauseCode: 4240,
      hangupCauseName: 'sip_auth_failed',
      reason: 'the far end refused the credentials (401 Unauthorized)',
    });
    expect(gw.logs.join('\n')).not.toContain('Trunk-Pass-77');
  });
});

describe('the log lines of an inbound call', () => {
  it('are arrived, answered and ended, with the caller and the number called', async () => {
    const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: { app_name: 'desk', answer_url: `${app.baseUrl}/answer` },
    });
    const added = await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
      json: { numbers: '14155550199', carrier: 'c', region: 'r', app_id: application.body.app_id },
    });
    expect(added.status).toBeLessThan(300);
    app.serve('/answer', { body: '<Response><Wait length="1"/><Hangup/></Response>' });
    const call = carrier.uac.invite({
      target: `sip:14155550199@127.0.0.1:${gw.gateway.sip.addresses.udp.port}`,
      from: 'sip:+447400123456@127.0.0.1',
      sdp: sdp(media.port),
    });
    const outcome = await call.outcome;
    expect(outcome.answered).toBe(true);
    const uuid = () => app.requestsTo('/answer')[0]?.params.CallUUID;
    await until(() => uuid() !== undefined);
    await until(() => linesOf(gw.logs, uuid()!).some((l) => l.msg === 'call ended'), 10_000);
    const lines = linesOf(gw.logs, uuid()!);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [30, 'call arrived'],
      [30, 'call answered'],
      [30, 'call ended'],
    ]);
    expect(lines[0]).toMatchObject({ direction: 'inbound', to: '14155550199' });
    expect(lines[2]).toMatchObject({ hangupCauseCode: 4000, hangupSource: 'Answer XML' });
  });
});

describe('POST Call/ without a carrier', () => {
  let bare: TestGateway;
  beforeAll(async () => {
    bare = await startGateway({ listen: true });
  });
  afterAll(async () => {
    await bare.close();
  });

  it('refuses a phone number with 400 naming VOXGATE_CARRIER_URI, and places none of the request', async () => {
    const res = await bare.request('POST', `/v1/Account/${bare.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:bob@127.0.0.1:${carrier.port}<+14155550114`,
        answer_url: `${app.baseUrl}/answer`,
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      api_id: expect.any(String),
      error:
        'to: +14155550114 is a phone number and no carrier is configured: set ' +
        'VOXGATE_CARRIER_URI to the SIP URI calls to phone numbers go to (SIP URIs need none)',
    });
    expect(bare.gateway.calls.liveCount).toBe(0);
    expect(bare.logs.filter((l) => l.includes('"call created"'))).toEqual([]);
  });

  it('still places a call to a SIP URI', async () => {
    let invited = 0;
    carrier.uas.onInvite = (invite: IncomingInvite) => {
      invited++;
      invite.reject(486, 'Busy Here');
    };
    const res = await bare.request('POST', `/v1/Account/${bare.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:bob@127.0.0.1:${carrier.port}`,
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    expect(res.status).toBe(201);
    await until(() => app.requestsTo('/hangup').length === 1, 15_000);
    expect(invited).toBe(1);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({ HangupCauseCode: '3010' });
  });
});
