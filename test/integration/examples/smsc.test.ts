import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  numberWithApplication,
  startExample,
  startServingExample,
  type ExampleProcess,
  type ServingExample,
} from '../../support/example-process.js';
import { freePort } from '../../support/free-port.js';
import type { TestGateway } from '../../support/gateway.js';
import { processApi, spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';
import { until } from '../../support/wait.js';

/**
 * The SMS quickstart as a user runs it: `npm run smsc` (examples/smsc.ts) in its own process,
 * voxgate started with the VOXGATE_SMPP_URL the tool printed, the auto-reply example on a
 * number, and a message typed into the tool.
 */
const AUTH = { id: 'MA' + 'SMSC0QUICKSTART000', token: 'smscQuickstartTokenNeverPrinted012345678' };
const NUMBER = '14155550126';
/** Replies to senders starting with 447499 are made to fail: the tool runs with --fail-to. */
const FAILING = '447499';

let smsc: ExampleProcess;
let gateway: GatewayProcess;
let api: TestGateway;
let app: ServingExample;
let smppUrl: string;

beforeAll(async () => {
  const port = await freePort();
  smsc = startExample(
    'smsc',
    ['--port', String(port), '--receipt-delay', '300', '--fail-to', FAILING],
    {},
    { input: true },
  );
  smppUrl = (await smsc.waitFor(/^VOXGATE_SMPP_URL=/)).slice('VOXGATE_SMPP_URL='.length);
  // Typed before any gateway is bound: it waits for the bind, as `echo ... | npm run smsc` does.
  smsc.type('447400999999 14155550999 early bird');
  gateway = await spawnGateway({
    VOXGATE_SMPP_URL: smppUrl,
    VOXGATE_AUTH_ID: AUTH.id,
    VOXGATE_AUTH_TOKEN: AUTH.token,
    VOXGATE_DATA_DIR: '',
    VOXGATE_MEDIA_WORKERS: '1',
    VOXGATE_LOG_LEVEL: 'warn',
  });
  await gateway.healthy();
  api = processApi(gateway.port, AUTH);
  app = await startServingExample('sms-auto-reply', /SMS auto-reply listening/);
}, 60_000);

afterAll(async () => {
  await app?.stop();
  await gateway?.stop();
  await smsc?.stop();
});

/** The outbound message records to `to`, as the API lists them. */
async function outboundTo(to: string): Promise<{ message_state: string; error_code: string }[]> {
  const list = await api.request(
    'GET',
    `/v1/Account/${AUTH.id}/Message/?message_direction=outbound&limit=20`,
  );
  return list.body.objects.filter((m: { to_number: string }) => m.to_number === to);
}

describe('npm run smsc with the SMS auto-reply', () => {
  it('prints the URL the gateway binds with, and the bind', async () => {
    expect(smppUrl).toMatch(/^smpp:\/\/voxgate:secret@127\.0\.0\.1:\d+$/);
    await smsc.waitFor(/bind_transceiver from 127\.0\.0\.1:\d+ as voxgate: bound/);
    expect(smsc.lines(/: bound$/)).toHaveLength(1);
  });

  it('holds a line typed before the gateway bound until it binds, then sends it', async () => {
    await smsc.waitFor(
      new RegExp(`waiting for a gateway to bind: start voxgate with VOXGATE_SMPP_URL=${smppUrl}$`),
    );
    const sent = await smsc.waitFor(/deliver_sm from 447400999999 to 14155550999/);
    expect(sent).toMatch(/, GSM 03\.38 \(data_coding 0\): answered ESME_ROK$/);
    const output = smsc.output();
    expect(output.indexOf(sent)).toBeGreaterThan(output.indexOf(': bound'));
  });

  it('refuses an application with only a message_url, as the API does', async () => {
    const refused = await api.request('POST', `/v1/Account/${AUTH.id}/Application/`, {
      json: { app_name: 'sms only', message_url: app.url('/message') },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toBe('missing required parameter: answer_url');
    await numberWithApplication(api, NUMBER, {
      answer_url: app.url('/answer'),
      message_url: app.url('/message'),
    });
    const answer = await fetch(app.url('/answer'));
    expect(await answer.text()).toBe(
      '<Response><Speak>This number answers text messages only.</Speak></Response>',
    );
  });

  it('sends a typed line to the gateway and prints the reply and its receipt', async () => {
    smsc.type(`447400123456 ${NUMBER} Hi there`);
    await smsc.waitFor(
      /deliver_sm from 447400123456 to 14155550126, GSM 03\.38 \(data_coding 0\): answered ESME_ROK/,
    );
    await app.waitFor(/message [0-9a-f-]{36} from 447400123456 to 14155550126: "Hi there"/);
    const submit = await smsc.waitFor(/submit_sm from 14155550126 to 447400123456/);
    expect(submit).toMatch(
      /submit_sm from 14155550126 to 447400123456, GSM 03\.38 \(data_coding 0\), receipt requested: "Thanks, we got your message: \\"Hi there\\"" -> message_id [0-9a-f]+$/,
    );
    const id = / message_id ([0-9a-f]+)$/.exec(submit)![1]!;
    await smsc.waitFor(
      new RegExp(`receipt DELIVRD for ${id} \\(to 447400123456\\) sent, answered ESME_ROK`),
    );
    await until(async () => (await outboundTo('447400123456'))[0]?.message_state === 'delivered');
    expect(await outboundTo('447400123456')).toHaveLength(1);
  });

  it('sends a long UCS-2 line in parts and prints the reply part by part, then joined', async () => {
    const text = 'Привет! Grüße aus Köln. '.repeat(4).trim();
    smsc.type(`447400123457 ${NUMBER} ${text}`);
    await smsc.waitFor(/deliver_sm from 447400123457 .* part 2\/2, UCS-2 .*ESME_ROK/);
    await app.waitFor(new RegExp(`from 447400123457 to 14155550126: "${text}"`));
    const reply = `Thanks, we got your message: "${text}"`;
    const whole = await smsc.waitFor(/whole message from 14155550126 to 447400123457/);
    expect(whole).toContain(`in 2 parts: ${JSON.stringify(reply)}`);
    const parts = smsc.lines(/submit_sm from 14155550126 to 447400123457/);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toMatch(
      /, part 1\/2 \(UDH ref \d+\), UCS-2 \(data_coding 8\), receipt requested/,
    );
    expect(parts[1]).toMatch(
      /, part 2\/2 \(UDH ref \d+\), UCS-2 \(data_coding 8\), receipt requested/,
    );
    await until(async () => (await outboundTo('447400123457'))[0]?.message_state === 'delivered');
  });

  it('makes the receipt UNDELIV for a destination given to --fail-to', async () => {
    smsc.type(`> ${FAILING}000001 ${NUMBER} Will this reach me?`);
    const submit = await smsc.waitFor(/submit_sm from 14155550126 to 447499000001/);
    const id = / message_id ([0-9a-f]+)$/.exec(submit)![1]!;
    await smsc.waitFor(
      new RegExp(`receipt UNDELIV for ${id} \\(to 447499000001\\) sent, answered ESME_ROK`),
    );
    await until(async () => (await outboundTo('447499000001'))[0]?.message_state === 'undelivered');
    expect((await outboundTo('447499000001'))[0]!.error_code).toBe('70');
  });

  it('explains a line it does not understand, and sends nothing', async () => {
    const before = smsc.lines(/deliver_sm from/).length;
    smsc.type('hello');
    await smsc.waitFor(/not understood: type FROM TO TEXT/);
    expect(smsc.lines(/deliver_sm from/)).toHaveLength(before);
  });
});
