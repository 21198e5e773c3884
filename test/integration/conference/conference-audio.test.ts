import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp, expectValidSignatures, paramsOf } from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import { powerAt } from '../../support/signal.js';
import type { SipPeer } from '../../support/sip-peer.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Phones of the project's own (its SIP stack and an RTP peer), each playing its own tone, call
 * a number whose answer XML puts them in a conference: what each one receives is measured.
 */
const NUMBER = '14155550199';
const TONES = [500, 800, 1300];
let gw: TestGateway;
let app: ClientApp;
let sip: SipPeer;
let room: ConferenceGateway;
const phones: TonePhone[] = [];

beforeAll(async () => {
  room = await ConferenceGateway.start({ number: NUMBER, appName: 'rooms', hangupUrl: true });
  ({ gw, app, sip } = room);
});

afterEach(async () => {
  for (const phone of phones.splice(0)) {
    await phone.hangup();
    await phone.close();
  }
  await until(
    async () =>
      (await gw.request('GET', `/v1/Account/${gw.main.id}/Call/?status=live`)).body.calls
        ?.length === 0,
    5000,
  ).catch(() => undefined);
  app.reset();
});

afterAll(async () => {
  await room?.close();
});

async function join(count: number, from = 'phone'): Promise<TonePhone[]> {
  const joined: TonePhone[] = [];
  for (let i = 0; i < count; i++) {
    const phone = await TonePhone.call(
      sip,
      { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from: `${from}${i}` },
      TONES[i]!,
    );
    phones.push(phone);
    joined.push(phone);
  }
  return joined;
}

/** Power of each tone in what `phone` heard over the last second. */
async function tonesHeard(phone: TonePhone): Promise<number[]> {
  const from = phone.now;
  await sleep(1000);
  const heard = phone.heard(from);
  expect(heard.length).toBeGreaterThan(6000);
  return TONES.map((hz) => powerAt(heard, 8000, hz));
}

const LOUD = 1e6;
const QUIET = 1e4;

describe('<Conference>', () => {
  it('lets three members hear each other, never themselves, and tells callbackUrl who entered', async () => {
    app.serve('/answer', {
      body: `<Response><Conference callbackUrl="${app.baseUrl}/events">standup</Conference></Response>`,
    });
    const members = await join(3);
    await until(() => app.requestsTo('/events').length === 3, 5000);
    const entered = app.requestsTo('/events').map(paramsOf);
    expect(entered.map((p) => p.ConferenceAction)).toEqual(['enter', 'enter', 'enter']);
    expect(new Set(entered.map((p) => p.ConferenceUUID)).size).toBe(1);
    expect(entered.map((p) => p.ConferenceName)).toEqual(['standup', 'standup', 'standup']);
    expect(new Set(entered.map((p) => p.ConferenceMemberID)).size).toBe(3);
    for (const callback of app.requestsTo('/events'))
      expectValidSignatures(callback, { accountToken: gw.main.token, mainToken: gw.main.token });
    await sleep(300);
    const powers = await Promise.all(members.map(tonesHeard));
    powers.forEach((power, i) => {
      power.forEach((p, j) => {
        if (i === j) expect(p, `phone ${i} hears its own ${TONES[j]} Hz`).toBeLessThan(QUIET);
        else expect(p, `phone ${i} hears ${TONES[j]} Hz`).toBeGreaterThan(LOUD);
      });
    });
    // The first to leave: its exit is told, and the others hear only each other.
    await members[0]!.hangup();
    await until(() => app.requestsTo('/events').length === 4, 5000);
    expect(paramsOf(app.requestsTo('/events')[3]!)).toMatchObject({
      ConferenceAction: 'exit',
      ConferenceMemberID: entered[0]!.ConferenceMemberID,
    });
    await sleep(200);
    const after = await tonesHeard(members[1]!);
    expect(after[0]).toBeLessThan(QUIET);
    expect(after[2]).toBeGreaterThan(LOUD);
    // The record of a member's call keeps the conference.
    const hangupOf = () => app.requestsTo('/hangup').find((r) => paramsOf(r).From === 'phone0');
    await until(() => hangupOf() !== undefined, 5000);
    const record = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/Call/${paramsOf(hangupOf()!).CallUUID}/`,
    );
    expect(record.body.conference_uuid).toBe(entered[0]!.ConferenceUUID);
  }, 30_000);

  it('refuses a caller past maxMembers and runs the rest of its document', async () => {
    app.serve('/answer', {
      body: `<Response><Conference maxMembers="2">small</Conference><Redirect>${app.baseUrl}/full</Redirect></Response>`,
    });
    app.serve('/full', { body: '<Response><Wait length="5"/></Response>' });
    const members = await join(3, 'small');
    await until(() => app.requestsTo('/full').length === 1, 5000);
    expect(paramsOf(app.requestsTo('/full')[0]!).From).toBe('small2');
    await sleep(300);
    const powers = await tonesHeard(members[0]!);
    expect(powers[1]).toBeGreaterThan(LOUD);
    expect(powers[2]).toBeLessThan(QUIET);
  }, 30_000);

  it('keeps members waiting in silence until one with startConferenceOnEnter enters', async () => {
    app.serve('/answer', (request) => ({
      body: `<Response><Conference startConferenceOnEnter="${paramsOf(request).From === 'wait2' ? 'true' : 'false'}">moderated</Conference></Response>`,
    }));
    const [a, b] = await join(2, 'wait');
    await sleep(300);
    const waiting = await tonesHeard(a!);
    expect(waiting[1]).toBeLessThan(QUIET);
    const moderator = await TonePhone.call(
      sip,
      { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from: 'wait2' },
      TONES[2]!,
    );
    phones.push(moderator);
    await sleep(500);
    const started = await tonesHeard(a!);
    expect(started[1]).toBeGreaterThan(LOUD);
    expect(started[2]).toBeGreaterThan(LOUD);
    void b;
  }, 30_000);
});

describe('the Conference API', () => {
  const base = () => `/v1/Account/${gw.main.id}/Conference`;

  it('lists, shows, mutes, deafens and kicks members; 404 for what is not there', async () => {
    app.serve('/answer', {
      body: `<Response><Conference callbackUrl="${app.baseUrl}/events">api-room</Conference></Response>`,
    });
    const members = await join(3, 'api');
    await until(() => app.requestsTo('/events').length === 3, 5000);
    const listed = await gw.request('GET', `${base()}/`);
    expect(listed.status).toBe(200);
    expect(listed.body.conferences).toEqual(['api-room']);
    const shown = await gw.request('GET', `${base()}/api-room/`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ conference_name: 'api-room', conference_member_count: '3' });
    const ids = (shown.body.members as { member_id: string; from: string }[])
      .sort((a, b) => a.from.localeCompare(b.from))
      .map((m) => m.member_id);

    const muted = await gw.request('POST', `${base()}/api-room/Member/${ids[0]}/Mute/`);
    expect(muted.status).toBe(202);
    expect(muted.body).toMatchObject({ message: 'muted', member_id: ids[0] });
    const deaf = await gw.request('POST', `${base()}/api-room/Member/${ids[2]}/Deaf/`);
    expect(deaf.status).toBe(202);
    await sleep(200);
    const [one, two] = await Promise.all([tonesHeard(members[1]!), tonesHeard(members[2]!)]);
    expect(one[0], 'a muted member is not heard').toBeLessThan(QUIET);
    expect(one[2]).toBeGreaterThan(LOUD);
    expect(Math.max(...two), 'a deaf member hears nothing').toBeLessThan(QUIET);
    const state = await gw.request('GET', `${base()}/api-room/`);
    const byId = Object.fromEntries(
      (state.body.members as { member_id: string }[]).map((m) => [m.member_id, m]),
    );
    expect(byId[ids[0]!]).toMatchObject({ muted: true, deaf: false });
    expect(byId[ids[2]!]).toMatchObject({ muted: false, deaf: true });

    expect((await gw.request('DELETE', `${base()}/api-room/Member/${ids[0]}/Mute/`)).status).toBe(
      204,
    );
    await sleep(200);
    expect((await tonesHeard(members[1]!))[0], 'unmuted').toBeGreaterThan(LOUD);

    // Kicked: its document has nothing after the Conference, so the call ends with a BYE.
    const kicked = await gw.request('POST', `${base()}/api-room/Member/${ids[1]}/Kick/`);
    expect(kicked.status).toBe(202);
    expect(kicked.body).toMatchObject({ message: 'kicked', member_id: ids[1] });
    await until(() => members[1]!.byeReceived, 5000);
    expect(members[0]!.byeReceived).toBe(false);
    await until(() => app.requestsTo('/hangup').some((r) => paramsOf(r).From === 'api1'), 5000);
    const hangup = paramsOf(app.requestsTo('/hangup').find((r) => paramsOf(r).From === 'api1')!);
    expect(hangup.HangupCauseCode).toBe('4010');

    for (const [path, what] of [
      [`${base()}/api-room/Member/${ids[1]}/Mute/`, `member ${ids[1]} of conference api-room`],
      [`${base()}/api-room/Member/999/Kick/`, 'member 999 of conference api-room'],
      [`${base()}/no-such-room/Member/${ids[0]}/Kick/`, 'conference no-such-room'],
    ] as const) {
      const missing = await gw.request('POST', path);
      expect(missing.status, path).toBe(404);
      expect(missing.body.error).toBe(`${what} not found`);
    }
    expect((await gw.request('GET', `${base()}/no-such-room/`)).status).toBe(404);
    // Another account sees no such conference.
    const other = await gw.subaccount('outsider');
    const hidden = await gw.request('GET', `/v1/Account/${other.id}/Conference/api-room/`, {
      as: other,
    });
    expect(hidden.status).toBe(404);
    const theirs = await gw.request('GET', `/v1/Account/${other.id}/Conference/`, { as: other });
    expect(theirs.body.conferences).toEqual([]);

    // Hanging up a member ends its call; hanging up the room ends the rest.
    expect((await gw.request('DELETE', `${base()}/api-room/Member/${ids[0]}/`)).status).toBe(204);
    await until(() => members[0]!.byeReceived, 5000);
    expect((await gw.request('DELETE', `${base()}/api-room/`)).status).toBe(204);
    await until(() => members[2]!.byeReceived, 5000);
    expect((await gw.request('GET', `${base()}/`)).body.conferences).toEqual([]);
  }, 40_000);
});
