import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import { powerAt } from '../../support/signal.js';
import type { SipPeer } from '../../support/sip-peer.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone, type TonePhoneCodec } from '../../support/tone-phone.js';
import { sleep } from '../../support/wait.js';

/**
 * The 16 kHz mix end to end: phones of the project's own on Opus legs (coded and decoded at
 * 16 kHz) meet in a room; a 6 kHz tone, above anything an 8 kHz mix carries, reaches the other
 * member while every leg is wideband, and stops reaching it while a G.711 member is in.
 */
const NUMBER = '14155550133';
const WIDE_HZ = 6000;
const LOUD = 1e6;
const QUIET = 1e4;
let gw: TestGateway;
let app: ClientApp;
let sip: SipPeer;
let room: ConferenceGateway;
const phones: TonePhone[] = [];

beforeAll(async () => {
  room = await ConferenceGateway.start({ number: NUMBER, appName: 'wideband' });
  ({ gw, app, sip } = room);
  app.serve('/answer', { body: '<Response><Conference>wideband</Conference></Response>' });
});

afterEach(async () => {
  for (const phone of phones.splice(0)) {
    await phone.hangup();
    await phone.close();
  }
});

afterAll(async () => {
  await room?.close();
});

async function enter(hz: number, codec: TonePhoneCodec, from: string): Promise<TonePhone> {
  const phone = await TonePhone.call(
    sip,
    { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from },
    hz,
    codec,
  );
  phones.push(phone);
  return phone;
}

async function hears(phone: TonePhone, hz: number[]): Promise<number[]> {
  const from = phone.now;
  await sleep(1000);
  const heard = phone.heard(from);
  expect(heard.length).toBeGreaterThan(phone.rate * 0.75);
  return hz.map((f) => powerAt(heard, phone.rate, f));
}

describe('a conference of wideband legs', () => {
  it('mixes at 16 kHz while every leg allows it: a 6 kHz tone passes, and not with a G.711 member', async () => {
    await enter(WIDE_HZ, 'opus', 'wide0');
    const listener = await enter(1000, 'opus', 'wide1');
    await sleep(1000);
    const wide = await hears(listener, [WIDE_HZ, 1000]);
    expect(wide[0], '6 kHz through the 16 kHz mix').toBeGreaterThan(LOUD);
    expect(wide[1], 'not its own tone').toBeLessThan(QUIET);

    const narrow = await enter(500, 'pcmu', 'narrow');
    await sleep(500);
    const mixed = await hears(listener, [WIDE_HZ, 500]);
    expect(mixed[0], 'no 6 kHz through an 8 kHz mix').toBeLessThan(QUIET);
    expect(mixed[1], 'the G.711 member is heard').toBeGreaterThan(LOUD);

    await narrow.hangup();
    await sleep(500);
    expect((await hears(listener, [WIDE_HZ]))[0], '16 kHz again').toBeGreaterThan(LOUD);
  }, 30_000);
});
