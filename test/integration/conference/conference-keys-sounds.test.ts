import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp, paramsOf } from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import { powerAt } from '../../support/signal.js';
import type { SipPeer } from '../../support/sip-peer.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * What members do with their keys (hangupOnStar, digitsMatch) and the sounds of members coming
 * and going (enterSound, exitSound), on tone phones of the project's own: what each one hears is
 * measured, and what the application is told.
 */
const NUMBER = '14155550155';
/** Far from the beeps' 700 Hz. */
const TONES = [500, 1300, 1900];
const BEEP_HZ = 700;
const LOUD = 1e6;
const QUIET = 1e4;
const STAR = 10;
let gw: TestGateway;
let app: ClientApp;
let sip: SipPeer;
let room: ConferenceGateway;
const phones: TonePhone[] = [];

beforeAll(async () => {
  room = await ConferenceGateway.start({ number: NUMBER, appName: 'keys' });
  ({ gw, app, sip } = room);
});

afterEach(async () => {
  for (const phone of phones.splice(0)) {
    await phone.hangup();
    await phone.close();
  }
  app.reset();
});

afterAll(async () => {
  await room?.close();
});

async function enter(index: number, from = `member${index}`): Promise<TonePhone> {
  const phone = await TonePhone.call(
    sip,
    { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from },
    TONES[index]!,
  );
  phones.push(phone);
  return phone;
}

/** The loudest 300 ms of `hz` in what `phone` heard since `fromMs` (its own clock). */
function loudest(phone: TonePhone, fromMs: number, hz: number): number {
  const heard = phone.heard(fromMs);
  let best = 0;
  for (let at = 0; at + 2400 <= heard.length; at += 400) {
    best = Math.max(best, powerAt(heard.subarray(at, at + 2400), 8000, hz));
  }
  return best;
}

async function heardOverASecond(phone: TonePhone): Promise<number[]> {
  const from = phone.now;
  await sleep(1000);
  return TONES.map((hz) => powerAt(phone.heard(from), 8000, hz));
}

describe('members keys', () => {
  it('lets a member with hangupOnStar leave on *, its document going on', async () => {
    app.serve('/answer', (request) => ({
      body:
        paramsOf(request).From === 'leaver'
          ? `<Response><Conference hangupOnStar="true" action="${app.baseUrl}/left" redirect="false">keys</Conference><Redirect>${app.baseUrl}/after</Redirect></Response>`
          : '<Response><Conference>keys</Conference></Response>',
    }));
    app.serve('/left', { body: '<Response/>' });
    app.serve('/after', { body: '<Response><Wait length="10"/></Response>' });
    const stayer = await enter(0);
    const leaver = await enter(1, 'leaver');
    await sleep(300);
    expect((await heardOverASecond(stayer))[1]).toBeGreaterThan(LOUD);
    await leaver.pressKey(STAR);
    await until(() => app.requestsTo('/after').length === 1, 5000);
    expect(paramsOf(app.requestsTo('/after')[0]!).From).toBe('leaver');
    // The action was told which member left; with redirect false the document went on.
    expect(paramsOf(app.requestsTo('/left')[0]!)).toMatchObject({
      ConferenceName: 'keys',
      ConferenceMemberID: expect.stringMatching(/^\d+$/),
    });
    expect(leaver.byeReceived).toBe(false);
    await sleep(200);
    expect((await heardOverASecond(stayer))[1], 'the leaver is no longer heard').toBeLessThan(
      QUIET,
    );
    const room = await gw.request('GET', `/v1/Account/${gw.main.id}/Conference/keys/`);
    expect(room.body.conference_member_count).toBe('1');
  }, 30_000);

  it('tells callbackUrl when a member keys one of digitsMatch, and * alone does nothing', async () => {
    app.serve('/answer', {
      body: `<Response><Conference digitsMatch="12,#9" callbackUrl="${app.baseUrl}/events">digits</Conference></Response>`,
    });
    const [a] = [await enter(0), await enter(1)];
    await until(() => app.requestsTo('/events').length === 2, 5000);
    for (const key of [STAR, 1, 2]) await a!.pressKey(key);
    await until(() => app.requestsTo('/events').length === 3, 5000);
    await sleep(300);
    const events = app.requestsTo('/events').map(paramsOf);
    expect(events).toHaveLength(3);
    expect(events[2]).toMatchObject({
      ConferenceAction: 'digits',
      ConferenceDigitsMatch: '12',
      ConferenceName: 'digits',
      From: 'member0',
    });
    const room = await gw.request('GET', `/v1/Account/${gw.main.id}/Conference/digits/`);
    expect(room.body.conference_member_count).toBe('2');
  }, 30_000);
});

describe('enterSound and exitSound', () => {
  it('beeps to the members in the room when one enters (beep:1) and leaves (beep:2)', async () => {
    app.serve('/answer', {
      body: '<Response><Conference enterSound="beep:1" exitSound="beep:2">sounds</Conference></Response>',
    });
    const [a, b] = [await enter(0), await enter(1)];
    await sleep(800);
    const before = a!.now;
    await sleep(600);
    expect(loudest(a!, before, BEEP_HZ), 'no beep while no one comes').toBeLessThan(QUIET);
    const entering = a!.now;
    const c = await enter(2);
    await sleep(800);
    expect(loudest(a!, entering, BEEP_HZ), 'a hears c enter').toBeGreaterThan(LOUD);
    expect(loudest(b!, entering - 100, BEEP_HZ), 'b hears c enter').toBeGreaterThan(LOUD);
    const leaving = a!.now;
    await c.hangup();
    await sleep(1200);
    expect(loudest(a!, leaving, BEEP_HZ), 'a hears c leave').toBeGreaterThan(LOUD);
    // beep:2 is two beeps: 300 ms of tone, 200 ms apart.
    const heard = a!.heard(leaving);
    const frames: boolean[] = [];
    for (let at = 0; at + 160 <= heard.length; at += 160) {
      frames.push(powerAt(heard.subarray(at, at + 160), 8000, BEEP_HZ) > LOUD);
    }
    const runs = frames.join('').replace(/false/g, '0').replace(/true/g, '1').match(/1+/g) ?? [];
    expect(runs.filter((r) => r.length >= 10)).toHaveLength(2);
  }, 30_000);
});
