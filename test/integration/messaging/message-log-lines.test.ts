import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { until } from '../../support/wait.js';

/**
 * The log an operator follows messages by: one line when a message is accepted, one when the
 * carrier took it, one for its final state; a failed or undelivered one is a warning with its
 * error code and why. Numbers as the message's `log` setting keeps them; the text never.
 */
const US = '14155550100';
const UK = '447400123456';
const UK2 = '447400123457';
const UK3 = '447400123458';

let smsc: SmscSimulator;
let gw: TestGateway;
let base: string;

beforeAll(async () => {
  smsc = await SmscSimulator.start();
  gw = await startGateway({ env: { VOXGATE_SMPP_URL: smsc.url('enquire_link=1') } });
  base = `/v1/Account/${gw.main.id}`;
  await gw.request('POST', `${base}/Number/`, { json: { numbers: US, carrier: 'c', region: 'r' } });
  await smsc.waitForBind();
});

afterAll(async () => {
  await gw.close();
  await smsc.stop();
});

type Line = Record<string, unknown> & { level: number; msg: string };

const linesOf = (uuid: string): Line[] =>
  gw.logs.map((l) => JSON.parse(l) as Line).filter((l) => l.message_uuid === uuid);

/** Sends one SMS; the SMSC answers its submit, then sends the receipt `stat`. */
async function sendAndReceipt(
  body: Record<string, unknown>,
  stat: 'DELIVRD' | 'UNDELIV',
  final: string,
): Promise<string> {
  const submitted = smsc.submits.length;
  const res = await gw.request('POST', `${base}/Message/`, { json: { src: US, ...body } });
  expect(res.status).toBe(202);
  const uuid = res.body.message_uuid[0] as string;
  await smsc.waitForSubmits(submitted + 1);
  // The receipt once the send is recorded, as a real SMSC's comes after its answer.
  await until(() => linesOf(uuid).some((l) => l.msg === 'message submitted to the carrier'));
  await smsc.receipt(smsc.submits[submitted]!.messageId, stat, stat === 'DELIVRD' ? '000' : '005');
  await until(() => linesOf(uuid).some((l) => l.msg === final));
  return uuid;
}

describe('the log lines of a message', () => {
  it('are accepted, submitted to the carrier and delivered, without the text', async () => {
    const uuid = await sendAndReceipt(
      { dst: UK, text: 'Private words for Alice' },
      'DELIVRD',
      'message delivered',
    );
    const lines = linesOf(uuid);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [30, 'message accepted'],
      [30, 'message submitted to the carrier'],
      [30, 'message delivered'],
    ]);
    const ids = { type: 'sms', from: US, to: UK, units: 1, authId: gw.main.id };
    expect(lines[0]).toMatchObject({ ...ids, state: 'queued' });
    expect(lines[1]).toMatchObject({ ...ids, state: 'sent', carrier: 'carrier1' });
    expect(lines[2]).toMatchObject({ ...ids, state: 'delivered', carrier: 'carrier1' });
    expect(gw.logs.join('\n')).not.toContain('Private words');
  });

  it('warn when a message is undelivered, with its code and why, its number masked as log=false asks', async () => {
    const uuid = await sendAndReceipt(
      { dst: UK2, text: 'Quiet words for Bob', log: false },
      'UNDELIV',
      'message undelivered',
    );
    const lines = linesOf(uuid);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [30, 'message accepted'],
      [30, 'message submitted to the carrier'],
      [40, 'message undelivered'],
    ]);
    expect(lines[2]).toMatchObject({
      state: 'undelivered',
      to: '447400123xxx',
      error_code: expect.any(String),
      reason: 'delivery receipt UNDELIV',
    });
    const record = (await gw.request('GET', `${base}/Message/${uuid}/`)).body;
    expect(lines[2]!.error_code).toBe(record.error_code);
    expect(gw.logs.join('\n')).not.toContain(UK2);
    expect(gw.logs.join('\n')).not.toContain('Quiet words');
  });

  it('warn when a message fails before it is sent, naming why', async () => {
    // The destination opted out of this sender (a STOP over SMPP): the send is refused (200).
    expect(await smsc.inbound({ from: UK3, to: US, shortMessage: Buffer.from('STOP') })).toBe(0);
    await until(async () => (await gw.gateway.state.optOuts.all(gw.main.id)).length === 1);
    const res = await gw.request('POST', `${base}/Message/`, {
      json: { src: US, dst: UK3, text: 'After the stop' },
    });
    expect(res.status).toBe(202);
    const uuid = res.body.message_uuid[0] as string;
    await until(() => linesOf(uuid).some((l) => l.msg === 'message failed'));
    const lines = linesOf(uuid);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [30, 'message accepted'],
      [40, 'message failed'],
    ]);
    expect(lines[1]).toMatchObject({
      state: 'failed',
      error_code: '200',
      reason: 'the destination opted out of messages from this sender',
    });
  });
});
