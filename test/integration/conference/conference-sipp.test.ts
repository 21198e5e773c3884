import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp, paramsOf } from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import { powerAt } from '../../support/signal.js';
import type { SipPeer } from '../../support/sip-peer.js';
import { runSipp } from '../../support/sipp.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * SIPp as a conference member beside a tone phone. SIPp sends back every RTP packet it
 * receives (-rtp_echo): what it hears of the room is its voice. The phone hears no echo of
 * itself from the mix, so its own tone in what it hears can only have gone to SIPp and come
 * back through the room: SIPp received the room's audio and was heard in it.
 */
const NUMBER = '14155550199';
const HZ = 1300;
const LOUD = 1e6;
const QUIET = 1e4;
let gw: TestGateway;
let app: ClientApp;
let sip: SipPeer;
let room: ConferenceGateway;
let phone: TonePhone | null = null;

beforeAll(async () => {
  room = await ConferenceGateway.start({ number: NUMBER, appName: 'sipp-room' });
  ({ gw, app, sip } = room);
  app.serve('/answer', {
    body: `<Response><Conference callbackUrl="${app.baseUrl}/events">sipp</Conference></Response>`,
  });
}, 30_000);

afterAll(async () => {
  await phone?.hangup();
  await phone?.close();
  await room?.close();
});

/** Power of the phone's own tone in what it heard over the next second. */
async function ownToneHeard(p: TonePhone): Promise<number> {
  const from = p.now;
  await sleep(1000);
  return powerAt(p.heard(from), 8000, HZ);
}

describe('SIPp in a conference', () => {
  it('is mixed with a tone phone both ways, and leaves on a BYE from a Conference API hangup', async () => {
    phone = await TonePhone.call(
      sip,
      { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from: 'phone' },
      HZ,
    );
    await until(() => app.requestsTo('/events').length === 1, 5000);
    expect(await ownToneHeard(phone), 'alone, the phone hears nothing of itself').toBeLessThan(
      QUIET,
    );

    const sipp = runSipp({
      scenario: 'caller-hung-up.xml',
      target: { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port },
      calls: 1,
      extraArgs: ['-s', NUMBER, '-rtp_echo'],
      timeoutMs: 30_000,
    });
    await until(() => app.requestsTo('/events').length === 2, 10_000);
    const entered = paramsOf(app.requestsTo('/events')[1]!);
    expect(entered).toMatchObject({ ConferenceAction: 'enter', From: 'harness' });
    await sleep(300);
    expect(await ownToneHeard(phone), 'the room reached SIPp and SIPp the room').toBeGreaterThan(
      LOUD,
    );
    phone.silent = true;
    await sleep(300);
    expect(await ownToneHeard(phone), 'nothing else came back').toBeLessThan(QUIET);

    const hangup = await gw.request(
      'DELETE',
      `/v1/Account/${gw.main.id}/Conference/sipp/Member/${entered.ConferenceMemberID}/`,
    );
    expect(hangup.status).toBe(204);
    const result = await sipp;
    expect(result.errors).toEqual([]);
    expect(result.successful).toBe(1);
    expect(result.failed).toBe(0);
    await until(() => app.requestsTo('/events').length === 3, 5000);
    expect(paramsOf(app.requestsTo('/events')[2]!)).toMatchObject({
      ConferenceAction: 'exit',
      From: 'harness',
    });
    const room = await gw.request('GET', `/v1/Account/${gw.main.id}/Conference/sipp/`);
    expect(room.body.conference_member_count).toBe('1');
  }, 40_000);
});
