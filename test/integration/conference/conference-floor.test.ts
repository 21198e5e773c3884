import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientApp,
  expectValidSignatures,
  paramsOf,
  type ReceivedCallback,
} from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import type { SipPeer } from '../../support/sip-peer.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * floorEvent: members speak in turn on tone phones (a phone's tone off is silence on the
 * wire), on a gateway with two media workers so that members are linked across them, and the
 * callbacks each member's application gets are counted.
 */
const NUMBER = '14155550188';
const TONES = [500, 1300, 1900];
let gw: TestGateway;
let app: ClientApp;
let sip: SipPeer;
let room: ConferenceGateway;
const phones: TonePhone[] = [];

beforeAll(async () => {
  room = await ConferenceGateway.start({
    number: NUMBER,
    appName: 'floor',
    env: { VOXGATE_MEDIA_WORKERS: '2' },
  });
  ({ gw, app, sip } = room);
  // a and b ask for floor events, c does not; each has its own callbackUrl.
  app.serve('/answer', (request) => {
    const from = paramsOf(request).From!;
    const floor = from === 'c' ? '' : ' floorEvent="true"';
    return {
      body: `<Response><Conference${floor} callbackUrl="${app.baseUrl}/events/${from}">floor</Conference></Response>`,
    };
  });
}, 30_000);

afterAll(async () => {
  for (const phone of phones) {
    await phone.hangup();
    await phone.close();
  }
  await room?.close();
});

/** A member whose phone is silent until told to speak. */
async function enter(index: number, from: string): Promise<TonePhone> {
  const phone = await TonePhone.call(
    sip,
    { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from },
    TONES[index]!,
  );
  // Before its first frame is due.
  phone.silent = true;
  phones.push(phone);
  return phone;
}

const events = (from: string): ReceivedCallback[] => app.requestsTo(`/events/${from}`);
const floors = (from: string) =>
  events(from)
    .map(paramsOf)
    .filter((p) => p.ConferenceAction === 'floor');

describe('floorEvent', () => {
  it('tells the members that asked who takes the floor, and a blip under the hold does not move it', async () => {
    const [a, b] = [await enter(0, 'a'), await enter(1, 'b'), await enter(2, 'c')];
    await until(() => ['a', 'b', 'c'].every((m) => events(m).length === 1), 5000);
    const room = await gw.request('GET', `/v1/Account/${gw.main.id}/Conference/floor/`);
    const shown = room.body.members as { member_id: string; call_uuid: string; from: string }[];
    const member = (from: string) => shown.find((m) => m.from === from)!;

    // a speaks alone.
    a!.silent = false;
    await until(() => floors('a').length === 1 && floors('b').length === 1, 5000);
    a!.silent = true;
    for (const to of ['a', 'b']) {
      expect(floors(to)[0]).toMatchObject({
        ConferenceAction: 'floor',
        ConferenceName: 'floor',
        ConferenceUUID: paramsOf(events('a')[0]!).ConferenceUUID,
        ConferenceMemberID: member('a').member_id,
        CallUUID: member('a').call_uuid,
        From: 'a',
      });
    }
    const callback = events('b').find((c) => paramsOf(c).ConferenceAction === 'floor')!;
    expectValidSignatures(callback, { accountToken: gw.main.token, mainToken: gw.main.token });

    // a is silent and b speaks: b takes it (its leg is on the other worker, linked to the mix).
    b!.silent = false;
    await until(() => floors('a').length === 2 && floors('b').length === 2, 5000);
    b!.silent = true;
    for (const to of ['a', 'b']) {
      expect(floors(to)[1]).toMatchObject({
        ConferenceMemberID: member('b').member_id,
        CallUUID: member('b').call_uuid,
        From: 'b',
      });
    }

    // a speaks for 200 ms, half the hold: the floor stays with b.
    await sleep(300);
    a!.silent = false;
    await sleep(200);
    a!.silent = true;
    await sleep(1000);
    expect(floors('a')).toHaveLength(2);
    expect(floors('b')).toHaveLength(2);

    // Spoken for longer, it moves.
    a!.silent = false;
    await until(() => floors('a').length === 3 && floors('b').length === 3, 5000);
    a!.silent = true;
    expect(floors('b')[2]!.ConferenceMemberID).toBe(member('a').member_id);

    // c's element had no floorEvent: its application heard of its entering alone.
    await sleep(300);
    expect(events('c').map(paramsOf)).toEqual([
      expect.objectContaining({ ConferenceAction: 'enter', From: 'c' }),
    ]);
    expect(floors('a')).toHaveLength(3);
  }, 40_000);
});
