import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * A phone on a PCMU call re-INVITEs with the same codecs in another order, as a session
 * refresh or a hold from some PBXs and carriers does: the gateway's answer keeps PCMU, and the
 * audio it sends stays PCMU, where taking the re-offer's first codec would switch the call to
 * PCMA mid-way. A re-offer without PCMU moves the call to PCMA.
 */
const NUMBER = '14155550177';
let room: ConferenceGateway;
let phone: TonePhone;

beforeAll(async () => {
  room = await ConferenceGateway.start({ number: NUMBER, appName: 'reinvite-codec' });
  room.app.serve('/answer', () => ({
    body: '<Response><Speak loop="0">The codec stays the same across a refresh.</Speak></Response>',
  }));
  phone = await TonePhone.call(
    room.sip,
    { user: NUMBER, port: room.gw.gateway.sip.addresses.udp.port, from: 'refresher' },
    700,
  );
}, 30_000);

afterAll(async () => {
  await phone?.hangup();
  await phone?.close();
  await room?.close();
});

/** The payload types of what the phone received since `fromMs`. */
const payloadTypes = (fromMs: number) =>
  new Set(phone.rtp.received.filter((p) => p.at >= fromMs).map((p) => p.payloadType));

describe('a re-offer listing the codecs in another order', () => {
  it('is answered with the codec in use, and the audio stays in it', async () => {
    await until(() => phone.rtp.received.some((p) => p.payloadType === 0), 10_000);
    const answer = await phone.reoffer('8 0 101');
    expect(answer).toMatch(/^m=audio \d+ RTP\/AVP 0 101\r$/m);
    const after = phone.now + 100;
    await sleep(600);
    expect(payloadTypes(after)).toEqual(new Set([0]));
  });

  it('moves the call to the codec offered when the one in use is not', async () => {
    const answer = await phone.reoffer('8 101');
    expect(answer).toMatch(/^m=audio \d+ RTP\/AVP 8 101\r$/m);
    const after = phone.now + 100;
    await sleep(600);
    expect(payloadTypes(after)).toEqual(new Set([8]));
  });
});
