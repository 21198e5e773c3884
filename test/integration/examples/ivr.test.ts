import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { muLawDecode } from '../../../src/media/codec/g711.js';
import {
  exampleEnv,
  gatewaySip,
  numberWithApplication,
  startExample,
  startServingExample,
  type ServingExample,
} from '../../support/example-process.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { strongestFrequency } from '../../support/signal.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';

/**
 * examples/ivr.ts runs a real call: examples/call-in.ts dials the number and presses keys, and
 * option 2 dials a SIPp callee whose media is an RTP peer of the test.
 */
let gw: TestGateway;
let ivr: ServingExample;
let callee: SippUas;
let media: RtpPeer;
const NUMBER = '14155550124';

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  media = await RtpPeer.open();
  callee = await startSippUas({
    scenario: 'carrier-answer.xml',
    variables: { rtp_port: String(media.port) },
  });
  ivr = await startServingExample('ivr', /IVR listening/, [
    ...['--dial-to', `sip:operator@127.0.0.1:${callee.port}`, '--dial-time-limit', '3'],
  ]);
  await numberWithApplication(gw, NUMBER, {
    answer_url: ivr.url('/answer'),
    hangup_url: ivr.url('/hangup'),
  });
});

afterAll(async () => {
  await ivr?.stop();
  await callee?.stop();
  await media?.close();
  await gw?.close();
});

describe('examples/ivr.ts', () => {
  it("reads the menu, takes the caller's 2 and dials the operator, bridging the caller's audio", async () => {
    const caller = startExample(
      'call-in',
      [
        ...[NUMBER, '--gateway-sip', gatewaySip(gw), '--tone', '440'],
        ...['--dtmf', '2', '--dtmf-at', '2', '--seconds', '20'],
      ],
      exampleEnv(gw),
    );
    expect(await caller.exited).toBe(0);
    // The Dial's time limit ended the operator's leg; the IVR said goodbye and hung up.
    expect(caller.output()).toContain('the gateway hung up');
    // The menu is spoken (espeak-ng): the caller hears speech, not silence, at first.
    expect(caller.lines(/^heard +1 s: \d+ Hz strongest/)).toHaveLength(1);
    await ivr.waitFor(/: pressed 2$/);
    await ivr.waitFor(/: dialling sip:operator@127\.0\.0\.1:\d+$/);
    await ivr.waitFor(/: Dial ended: DialStatus completed, B leg [0-9a-f-]{36}, /);
    await ivr.waitFor(/ended: Normal Hangup, \d+ s$/);
    await callee.settled(1);
    // The B leg got the caller's 440 Hz tone through the bridge.
    const audio = media.received.filter((p) => p.payloadType === 0);
    expect(audio.length).toBeGreaterThan(50);
    const pcm = muLawDecode(Buffer.concat(audio.slice(-50).map((p) => Buffer.from(p.payload))));
    expect(strongestFrequency(pcm, 8000, 10)).toBe(440);
  });

  it('hangs up after option 1 with a message', async () => {
    const caller = startExample(
      'call-in',
      [
        NUMBER,
        '--gateway-sip',
        gatewaySip(gw),
        '--dtmf',
        '1',
        '--dtmf-at',
        '1.5',
        '--seconds',
        '15',
      ],
      exampleEnv(gw),
    );
    expect(await caller.exited).toBe(0);
    expect(caller.output()).toContain('the gateway hung up');
    expect(ivr.lines(/: pressed 1$/)).toHaveLength(1);
  });
});
