import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeGsm7 } from '../../../src/messaging/sms/gsm7.js';
import { ClientApp, paramsBySequence, paramsOf } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis } from '../../support/redis-server.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { PROFILE } from '../../support/profile.js';
import { makeTestCertificate } from '../../support/tls-certificate.js';
import { describeEachStore } from '../../support/stores.js';
import { until } from '../../support/wait.js';

const US = '14155550100';
const UK = '447400123456';
const UK2 = '447400123457';

async function gatewayWith(
  smsc: SmscSimulator,
  options: { redisUrl?: string; parameters?: string; env?: Record<string, string> } = {},
) {
  const gw = await startGateway({
    redisUrl: options.redisUrl,
    env: { VOXGATE_SMPP_URL: smsc.url(options.parameters ?? 'enquire_link=1'), ...options.env },
  });
  const base = `/v1/Account/${gw.main.id}`;
  await gw.request('POST', `${base}/Number/`, { json: { numbers: US, carrier: 'c', region: 'r' } });
  await smsc.waitForBind();
  return { gw, base };
}

const stateOf = async (gw: TestGateway, base: string, uuid: string) =>
  (await gw.request('GET', `${base}/Message/${uuid}/`)).body;

describeEachStore('SMS over SMPP', (target) => {
  let smsc: SmscSimulator;
  let gw: TestGateway;
  let base: string;
  let client: ClientApp;
  beforeAll(async () => {
    client = await ClientApp.start();
  });
  afterAll(async () => {
    await client.close();
  });
  beforeEach(async () => {
    await target.flush();
    client.reset();
    smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
    ({ gw, base } = await gatewayWith(smsc, { redisUrl: target.redisUrl() }));
  });
  afterEach(async () => {
    await gw.close();
    await smsc.stop();
  });

  const send = (body: Record<string, unknown>) =>
    gw.request('POST', `${base}/Message/`, { json: { src: US, ...body } });

  it("sends GSM text with '@' and '€' as data_coding 0 septets, and follows the receipt to delivered", async () => {
    const url = `${client.baseUrl}/status`;
    const res = await send({ dst: UK, text: 'Pay @ 5€ {ok}', url });
    expect(res.status).toBe(202);
    await smsc.waitForSubmits(1);
    const [submit] = smsc.submits;
    expect(submit).toMatchObject({
      sourceAddr: US,
      sourceTon: 1,
      destinationAddr: UK,
      esmClass: 0,
      dataCoding: 0,
      registeredDelivery: 1,
    });
    expect(submit!.shortMessage.toString('hex')).toBe(
      Buffer.from(encodeGsm7('Pay @ 5€ {ok}')).toString('hex'),
    );
    expect(submit!.shortMessage.subarray(4, 5).toString('hex')).toBe('00');
    const callbacks = await client.waitForRequests(3);
    const statuses = paramsBySequence(callbacks);
    expect(statuses.map((p) => [p.Status, p.Sequence])).toEqual([
      ['queued', '1'],
      ['sent', '2'],
      ['delivered', '3'],
    ]);
    expect(statuses[2]!.DeliveryReportTime).toMatch(/^\d{4}-\d\d-\d\d /);
    const record = await stateOf(gw, base, res.body.message_uuid[0]);
    expect(record).toMatchObject({ message_state: 'delivered', error_code: '000', units: 1 });
  });

  it('counts messages, parts and receipts in /metrics, shows the bind, and answers the SMSC’s enquire_link', async () => {
    const res = await send({ dst: UK, text: 'x'.repeat(161) });
    const uuid = res.body.message_uuid[0];
    await until(async () => (await stateOf(gw, base, uuid)).message_state === 'delivered');
    expect(await smsc.enquireLink()).toEqual({ command: 'enquire_link_resp', status: 0 });
    const metrics = (await gw.gateway.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const state of ['queued', 'sent', 'delivered'])
      expect(metrics).toContain(
        `voxgate_messages_total{direction="outbound",type="sms",state="${state}"} 1`,
      );
    expect(metrics).toContain('voxgate_message_parts_total 2');
    expect(metrics).toContain('voxgate_message_receipts_total{matched="true"} 2');
    expect(metrics).toContain(
      'voxgate_smpp_bind_state{carrier="carrier1",bind="1",state="bound"} 1',
    );
    expect(metrics).toContain('voxgate_smpp_window_in_use{carrier="carrier1",bind="1"} 0');
    expect(metrics).toMatch(/voxgate_smpp_window_size\{carrier="carrier1",bind="1"\} [1-9]/);
  });

  it('refuses sends from an unverified toll-free number to US (100) and Canadian (201) numbers, and sends once it is APPROVED', async () => {
    const TOLL_FREE = '18005550100';
    await gw.request('POST', `${base}/Number/`, {
      json: { numbers: TOLL_FREE, carrier: 'c', region: 'r' },
    });
    const url = `${client.baseUrl}/status`;
    const toUs = await gw.request('POST', `${base}/Message/`, {
      json: { src: TOLL_FREE, dst: '14155550177', text: 'hello', url },
    });
    const toCanada = await gw.request('POST', `${base}/Message/`, {
      json: { src: TOLL_FREE, dst: '16135550100', text: 'bonjour', url },
    });
    await gw.request('POST', `${base}/Message/`, {
      json: { src: TOLL_FREE, dst: UK, text: 'hi' },
    });
    const state = async (uuid: string) => stateOf(gw, base, uuid);
    await until(
      async () => (await state(toCanada.body.message_uuid[0])).message_state === 'failed',
    );
    await until(async () => (await state(toUs.body.message_uuid[0])).message_state === 'failed');
    expect(await state(toUs.body.message_uuid[0])).toMatchObject({
      error_code: '100',
      error_message: `toll-free ${TOLL_FREE} is not verified (it has no verification request): carriers refuse its messages to US and Canadian numbers`,
    });
    expect((await state(toCanada.body.message_uuid[0])).error_code).toBe('201');
    await smsc.waitForSubmits(1);
    expect(smsc.submits.map((s) => s.destinationAddr)).toEqual([UK]);
    await until(
      () => client.requestsTo('/status').filter((r) => r.params.Status === 'failed').length === 2,
    );

    const profile = (await gw.request('POST', `${base}/Profile/`, { json: PROFILE })).body
      .profile_uuid;
    const request = await gw.request('POST', `${base}/TollfreeVerification/`, {
      json: {
        profile_uuid: profile,
        number: TOLL_FREE,
        usecase: '2FA',
        usecase_summary: 'codes',
        message_sample: 'Acme code 123456',
        optin_image_url: 'https://acme.example.com/optin.png',
        optin_type: 'WEB_FORM',
        volume: '1,000',
      },
    });
    const record = await gw.gateway.state.tollfreeVerifications.get(gw.main.id, request.body.uuid);
    await gw.gateway.tollfree.move(record!, 'APPROVED');
    const verified = await gw.request('POST', `${base}/Message/`, {
      json: { src: TOLL_FREE, dst: '16135550100', text: 'bonjour' },
    });
    expect(verified.status).toBe(202);
    await smsc.waitForSubmits(2);
    expect(smsc.submits[1]).toMatchObject({
      sourceAddr: TOLL_FREE,
      destinationAddr: '16135550100',
    });
  });

  it('sends Greek and an emoji as UCS-2 (data_coding 8, UTF-16BE with a surrogate pair)', async () => {
    await send({ dst: UK, text: 'γειά 😀' });
    await smsc.waitForSubmits(1);
    expect(smsc.submits[0]!.dataCoding).toBe(8);
    expect(smsc.submits[0]!.shortMessage.toString('hex')).toBe('03b303b503b903ac0020d83dde00');
  });

  it('sends 161 characters in two UDH parts and 1,600 in eleven, one record each', async () => {
    const two = await send({ dst: UK, text: 'a'.repeat(161) });
    await smsc.waitForSubmits(2);
    const [first, second] = smsc.submits;
    expect(first!.esmClass).toBe(0x40);
    const udh = first!.shortMessage.subarray(0, 6);
    expect(udh.subarray(0, 3).toString('hex')).toBe('050003');
    expect([udh[4], udh[5]]).toEqual([2, 1]);
    expect(second!.shortMessage.subarray(0, 6).toString('hex')).toBe(
      `050003${udh.subarray(3, 4).toString('hex')}0202`,
    );
    expect(first!.shortMessage.length - 6).toBe(153);
    expect(second!.shortMessage.length - 6).toBe(8);
    await until(
      async () => (await stateOf(gw, base, two.body.message_uuid[0])).message_state === 'delivered',
    );
    expect((await stateOf(gw, base, two.body.message_uuid[0])).units).toBe(2);

    const eleven = await send({ dst: UK2, text: 'b'.repeat(1600) });
    await smsc.waitForSubmits(13);
    expect(smsc.submits.filter((s) => s.destinationAddr === UK2)).toHaveLength(11);
    await until(
      async () =>
        (await stateOf(gw, base, eleven.body.message_uuid[0])).message_state === 'delivered',
    );
    expect((await stateOf(gw, base, eleven.body.message_uuid[0])).total_amount).toBe('0.38500');
  });

  it('joins inbound parts that arrive out of order and hands the text to message_url', async () => {
    const app = await gw.request('POST', `${base}/Application/`, {
      json: {
        app_name: 'in',
        answer_url: `${client.baseUrl}/a`,
        message_url: `${client.baseUrl}/in`,
      },
    });
    await gw.request('POST', `${base}/Number/${US}/`, { json: { app_id: app.body.app_id } });
    const part = (seq: number, text: string) =>
      Buffer.concat([
        Buffer.from([0x05, 0x00, 0x03, 0x77, 0x03, seq]),
        Buffer.from(encodeGsm7(text)),
      ]);
    expect(
      await smsc.inbound({ from: UK, to: US, esmClass: 0x40, shortMessage: part(3, 'end') }),
    ).toBe(0);
    await smsc.inbound({ from: UK, to: US, esmClass: 0x40, shortMessage: part(1, 'Hello @ ') });
    await smsc.inbound({ from: UK, to: US, esmClass: 0x40, shortMessage: part(2, 'the ') });
    // And a UCS-2 message in two SAR parts.
    const ucs2 = Buffer.from('00c400d6', 'hex');
    await smsc.inbound({
      from: UK2,
      to: US,
      dataCoding: 8,
      shortMessage: ucs2.subarray(2),
      sar: { reference: 9, total: 2, sequence: 2 },
    });
    await smsc.inbound({
      from: UK2,
      to: US,
      dataCoding: 8,
      shortMessage: ucs2.subarray(0, 2),
      sar: { reference: 9, total: 2, sequence: 1 },
    });
    const requests = await client.waitForRequests(2);
    const texts = requests.map(paramsOf).map((p) => [p.From, p.Text, p.Units]);
    expect(texts).toContainEqual([UK, 'Hello @ the end', '3']);
    expect(texts).toContainEqual([UK2, 'ÄÖ', '2']);
  });
});

describe('SMS over SMPP: a carrier that misbehaves', () => {
  let smsc: SmscSimulator;
  let gw: TestGateway;
  let base: string;
  afterEach(async () => {
    await gw?.close();
    await smsc?.stop();
  });

  const burst = async (count: number) => {
    const dst = Array.from({ length: count }, (_, k) => `4474001${String(k).padStart(5, '0')}`);
    const res = await gw.request('POST', `${base}/Message/`, {
      json: { src: US, dst: dst.join('<'), text: 'burst' },
    });
    expect(res.body.message_uuid).toHaveLength(count);
    return { uuids: res.body.message_uuid as string[], dst };
  };

  it('keeps at most `window` submits unanswered', async () => {
    smsc = await SmscSimulator.start();
    ({ gw, base } = await gatewayWith(smsc, { parameters: 'window=5&mps=0' }));
    smsc.hold();
    await burst(30);
    await until(() => smsc.heldCount === 5);
    await new Promise((r) => setTimeout(r, 100));
    expect(smsc.heldCount).toBe(5);
    smsc.release();
    for (let round = 0; round < 10 && smsc.submits.length < 30; round++) {
      await until(() => smsc.heldCount > 0 || smsc.submits.length === 30 || false, 2000).catch(
        () => undefined,
      );
      smsc.hold();
      smsc.release();
    }
    await smsc.waitForSubmits(30);
  });

  it('slows down on ESME_RTHROTTLED and loses nothing', async () => {
    smsc = await SmscSimulator.start();
    ({ gw, base } = await gatewayWith(smsc, { parameters: 'mps=0' }));
    smsc.throttleNext(3);
    const { uuids } = await burst(5);
    await smsc.waitForSubmits(5, 15_000);
    for (const uuid of uuids)
      await until(async () => (await stateOf(gw, base, uuid)).message_state === 'sent', 15_000);
    const metrics = await gw.gateway.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(
      /voxgate_smpp_throttle_events\{carrier="carrier1",bind="1"\} [1-9]/,
    );
  });

  it('sends every message exactly once when the connection drops mid-burst', async () => {
    smsc = await SmscSimulator.start();
    ({ gw, base } = await gatewayWith(smsc, { parameters: 'window=10&mps=0' }));
    smsc.hold();
    const { dst } = await burst(20);
    await until(() => smsc.heldCount === 10);
    smsc.release(); // ten accepted
    smsc.hold();
    await until(() => smsc.heldCount === 10);
    smsc.dropConnections(); // ten never answered: they must go again
    smsc.release();
    await smsc.waitForSubmits(20, 20_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(smsc.submits.map((s) => s.destinationAddr).sort()).toEqual([...dst].sort());
    expect(smsc.binds).toBe(2);
  });

  it('answers a malformed PDU with generic_nack and keeps the bind up', async () => {
    smsc = await SmscSimulator.start();
    ({ gw, base } = await gatewayWith(smsc));
    // A deliver_sm cut short inside its mandatory fields.
    smsc.sendRaw(Buffer.from('000000120000000500000000000000070041', 'hex'));
    await until(() => smsc.answers.length === 1);
    expect(smsc.answers[0].command).toBe('generic_nack');
    expect(smsc.answers[0].sequence_number).toBe(7);
    await burst(1);
    await smsc.waitForSubmits(1);
    expect(gw.logs.join('\n')).toContain('malformed PDU from the carrier');
  });

  it('fails a message with 420 when it expires before the carrier takes it', async () => {
    smsc = await SmscSimulator.start();
    const down = smsc.url();
    await smsc.stop();
    gw = await startGateway({ env: { VOXGATE_SMPP_URL: down } });
    base = `/v1/Account/${gw.main.id}`;
    await gw.request('POST', `${base}/Number/`, {
      json: { numbers: US, carrier: 'c', region: 'r' },
    });
    const res = await gw.request('POST', `${base}/Message/`, {
      json: { src: US, dst: UK, text: 'too late', message_expiry: 5 },
    });
    const uuid = res.body.message_uuid[0];
    await until(async () => (await stateOf(gw, base, uuid)).message_state === 'failed', 10_000);
    expect(await stateOf(gw, base, uuid)).toMatchObject({ error_code: '420' });
    smsc = await SmscSimulator.start();
  });

  it('binds again after ESME_RALYBND', async () => {
    smsc = await SmscSimulator.start();
    smsc.alreadyBoundNext(1);
    ({ gw, base } = await gatewayWith(smsc));
    expect(smsc.binds).toBe(1);
    expect(gw.logs.join('\n')).toContain('already bound');
  });

  it('follows a receipt the SMSC sends before the submit_sm_resp that names its id', async () => {
    smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD', receiptFirst: true });
    ({ gw, base } = await gatewayWith(smsc));
    const { uuids } = await burst(3);
    for (const uuid of uuids)
      await until(async () => (await stateOf(gw, base, uuid)).message_state === 'delivered');
    expect(gw.logs.join('\n')).not.toContain('delivery receipt for a message id nobody sent');
  });

  it('matches receipts whatever way the carrier writes the id, and maps errors', async () => {
    smsc = await SmscSimulator.start({ ids: 'decimal' });
    ({ gw, base } = await gatewayWith(smsc));
    const { uuids } = await burst(2);
    await smsc.waitForSubmits(2);
    await until(async () => (await stateOf(gw, base, uuids[1]!)).message_state === 'sent');
    const [a, b] = smsc.submits;
    // The answer said decimal; the receipt speaks hex, upper case, with leading zeros.
    const asHex = (id: string) => `000${Number(id).toString(16).toUpperCase()}`;
    await smsc.receipt(asHex(a!.messageId), 'DELIVRD');
    await smsc.receipt(b!.messageId, 'UNDELIV', '001');
    await smsc.receipt('999999', 'DELIVRD');
    const byDst = new Map(smsc.submits.map((s) => [s.destinationAddr, s]));
    for (const uuid of uuids) {
      await until(async () =>
        ['delivered', 'undelivered'].includes((await stateOf(gw, base, uuid)).message_state),
      );
    }
    const states = await Promise.all(uuids.map((u) => stateOf(gw, base, u)));
    const first = states.find((s) => byDst.get(s.to_number) === a)!;
    const second = states.find((s) => byDst.get(s.to_number) === b)!;
    expect(first).toMatchObject({ message_state: 'delivered', error_code: '000' });
    expect(second).toMatchObject({ message_state: 'undelivered', error_code: '50' });
    expect(gw.logs.join('\n')).toContain('delivery receipt for a message id nobody sent');
    const metrics = (await gw.gateway.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('voxgate_message_receipts_total{matched="false"} 1');
    expect(metrics).toContain('voxgate_message_receipts_total{matched="true"} 2');
  });

  for (const store of ['embedded', 'redis'] as const)
    it(`sends what was queued before a restart once, after it (${store} store)`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-messages-'));
      const redis = store === 'redis' ? await startRedis() : null;
      const where = redis ? { redisUrl: redis.url } : {};
      try {
        smsc = await SmscSimulator.start();
        const down = smsc.url();
        await smsc.stop();
        // The carrier is down: the messages wait in the outbox when the gateway stops.
        gw = await startGateway({
          ...where,
          env: { VOXGATE_SMPP_URL: down, VOXGATE_DATA_DIR: dataDir },
        });
        base = `/v1/Account/${gw.main.id}`;
        await gw.request('POST', `${base}/Number/`, {
          json: { numbers: US, carrier: 'c', region: 'r' },
        });
        const { uuids, dst } = await burst(3);
        await gw.close();
        smsc = await SmscSimulator.start();
        gw = await startGateway({
          ...where,
          env: { VOXGATE_SMPP_URL: smsc.url(), VOXGATE_DATA_DIR: dataDir },
        });
        base = `/v1/Account/${gw.main.id}`;
        await smsc.waitForSubmits(3);
        for (const uuid of uuids)
          await until(async () => (await stateOf(gw, base, uuid)).message_state === 'sent');
        await new Promise((r) => setTimeout(r, 300));
        expect(smsc.submits.map((s) => s.destinationAddr).sort()).toEqual([...dst].sort());
      } finally {
        await gw.close();
        gw = undefined as unknown as TestGateway;
        await redis?.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
});

describe('SMS over SMPP: carrier settings', () => {
  let smsc: SmscSimulator;
  let gw: TestGateway;
  let base: string;
  afterEach(async () => {
    await gw?.close();
    await smsc?.stop();
  });

  const sendLong = () =>
    gw.request('POST', `${base}/Message/`, {
      json: { src: US, dst: UK, text: 'ж'.repeat(100) },
    });

  it('sends long messages with the SAR TLVs when the carrier asks for sar', async () => {
    smsc = await SmscSimulator.start();
    ({ gw, base } = await gatewayWith(smsc, { parameters: 'long=sar' }));
    await sendLong();
    await smsc.waitForSubmits(2);
    const [a, b] = smsc.submits;
    expect(a!.esmClass).toBe(0);
    expect(a!.dataCoding).toBe(8);
    expect(a!.shortMessage.length).toBe(134);
    expect(a!.sar).toMatchObject({ total: 2, sequence: 1 });
    expect(b!.sar).toMatchObject({ reference: a!.sar!.reference, total: 2, sequence: 2 });
  });

  it('sends the whole text in message_payload when the carrier asks for payload', async () => {
    smsc = await SmscSimulator.start();
    ({ gw, base } = await gatewayWith(smsc, { parameters: 'long=payload' }));
    const res = await sendLong();
    await smsc.waitForSubmits(1);
    expect(smsc.submits[0]!.shortMessage.length).toBe(0);
    expect(smsc.submits[0]!.messagePayload!.length).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(smsc.submits).toHaveLength(1);
    const record = await stateOf(gw, base, res.body.message_uuid[0]);
    expect(record).toMatchObject({ message_state: 'sent', units: 2 });
  });

  it('binds over TLS (ssmpp://)', async () => {
    smsc = await SmscSimulator.start();
    const certificate = await makeTestCertificate();
    // TLS in front of the simulator, as a carrier's TLS endpoint would be.
    const front = createTlsServer({ cert: certificate.cert, key: certificate.key }, (socket) => {
      const inner = connect(smsc.port, '127.0.0.1');
      socket.pipe(inner).pipe(socket);
      socket.on('error', () => inner.destroy());
      inner.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    try {
      const port = (front.address() as AddressInfo).port;
      gw = await startGateway({
        env: { VOXGATE_SMPP_URL: `ssmpp://voxgate:secret@127.0.0.1:${port}?tls_insecure=true` },
      });
      base = `/v1/Account/${gw.main.id}`;
      await gw.request('POST', `${base}/Number/`, {
        json: { numbers: US, carrier: 'c', region: 'r' },
      });
      await smsc.waitForBind();
      await gw.request('POST', `${base}/Message/`, {
        json: { src: US, dst: UK, text: 'over TLS' },
      });
      await smsc.waitForSubmits(1);
      expect(smsc.submits[0]!.destinationAddr).toBe(UK);
    } finally {
      await gw?.close();
      gw = undefined as unknown as TestGateway;
      front.close();
      await certificate.remove();
    }
  });
});
