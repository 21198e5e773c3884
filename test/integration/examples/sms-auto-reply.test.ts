import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  numberWithApplication,
  startServingExample,
  type ServingExample,
} from '../../support/example-process.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { until } from '../../support/wait.js';

/** examples/sms-auto-reply.ts answers an SMS that an SMSC delivers to the gateway over SMPP. */
let gw: TestGateway;
let smsc: SmscSimulator;
let app: ServingExample;
const NUMBER = '14155550126';
const SENDER = '447400123456';

beforeAll(async () => {
  smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
  gw = await startGateway({ listen: true, env: { VOXGATE_SMPP_URL: smsc.url('enquire_link=1') } });
  app = await startServingExample('sms-auto-reply', /SMS auto-reply listening/);
  await numberWithApplication(gw, NUMBER, {
    answer_url: app.url('/answer'),
    message_url: app.url('/message'),
  });
  await smsc.waitForBind();
});

afterAll(async () => {
  await app?.stop();
  await gw?.close();
  await smsc?.stop();
});

describe('examples/sms-auto-reply.ts', () => {
  it('replies with <Message>, and the reply reaches the SMSC from the number written to', async () => {
    expect(
      await smsc.inbound({ from: SENDER, to: NUMBER, shortMessage: Buffer.from('Hi there') }),
    ).toBe(0);
    await app.waitFor(/message [0-9a-f-]{36} from 447400123456 to 14155550126: "Hi there"/);
    await smsc.waitForSubmits(1);
    const [reply] = smsc.submits;
    expect(reply).toMatchObject({ sourceAddr: NUMBER, destinationAddr: SENDER, dataCoding: 0 });
    expect(reply!.shortMessage.toString('latin1')).toBe('Thanks, we got your message: "Hi there"');
  });

  it('does not reply to STOP', async () => {
    const before = smsc.submits.length;
    await smsc.inbound({ from: '447400123457', to: NUMBER, shortMessage: Buffer.from('STOP') });
    await app.waitFor(/447400123457 opted out: no reply/);
    await until(async () => {
      const list = await gw.request(
        'GET',
        `/v1/Account/${gw.main.id}/Message/?message_direction=inbound`,
      );
      return list.body.objects.some(
        (m: { from_number: string; message_state: string }) =>
          m.from_number === '447400123457' && m.message_state === 'delivered',
      );
    }, 10_000);
    expect(smsc.submits.length).toBe(before);
  });
});
