import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleEnv, numberWithApplication, startExample } from '../../support/example-process.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';

/**
 * examples/sdk-node.ts, the documented setup: the official Node SDK (npm plivo) built by
 * voxgateSdkClient reads the account, creates an application and an endpoint, sends an SMS,
 * places a call, lists live calls and records, and deletes what it made. It runs as its own
 * process with a guard that fails any connection or name lookup off loopback, so a request
 * that would have left the machine (with the account's credentials) fails loudly.
 */
const GUARD = fileURLToPath(new URL('../../support/loopback-only.mjs', import.meta.url));
const guarded = { NODE_OPTIONS: `--import=${GUARD}` };

let gw: TestGateway;
let smsc: SmscSimulator;
let callee: SippUas;
let media: RtpPeer;
const NUMBER = '14155550127';

beforeAll(async () => {
  smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
  gw = await startGateway({ listen: true, env: { VOXGATE_SMPP_URL: smsc.url('enquire_link=1') } });
  await numberWithApplication(gw, NUMBER, { answer_url: 'http://127.0.0.1:9/answer' });
  media = await RtpPeer.open();
  callee = await startSippUas({
    scenario: 'carrier-answer.xml',
    variables: { rtp_port: String(media.port) },
  });
  await smsc.waitForBind();
});

afterAll(async () => {
  await callee?.stop();
  await media?.close();
  await gw?.close();
  await smsc?.stop();
});

/** The requests the gateway answered: "METHOD /path?query status", the account id as {id}. */
function gatewayRequests(): string[] {
  return gw.logs
    .map((line) => JSON.parse(line) as { req?: { method: string; url: string }; res?: object })
    .filter((entry) => entry.req && entry.res)
    .map((entry) => {
      const { req, res } = entry as {
        req: { method: string; url: string };
        res: { statusCode: number };
      };
      return `${req.method} ${req.url.replace(gw.main.id, '{id}')} ${res.statusCode}`;
    });
}

describe('examples/sdk-node.ts with voxgateSdkClient', () => {
  it('does accounts, applications, endpoints, messages, calls and live calls, all on loopback', async () => {
    const before = gatewayRequests().length;
    const sdk = startExample(
      'sdk-node',
      [
        ...['--from', NUMBER, '--to', `sip:operator@127.0.0.1:${callee.port}`],
        ...['--sms-to', '447400123456'],
      ],
      { ...exampleEnv(gw), ...guarded },
    );
    expect(await sdk.exited).toBe(0);
    const out = sdk.output();
    expect(out).not.toMatch(/loopback-only: refused/);
    expect(out).toMatch(/account: main \(standard\)/);
    expect(out).toMatch(/application: created \d+/);
    expect(out).toMatch(/endpoint: created sdknode\d+/);
    expect(out).toMatch(/SMS: message\(s\) queued \["[0-9a-f-]{36}"\]/);
    expect(out).toMatch(/call: call fired, request [0-9a-f-]{36}/);
    expect(out).toMatch(
      /live calls: 1\n {2}[0-9a-f-]{36} \+14155550127 -> sip:operator@127\.0\.0\.1:\d+ in-progress/,
    );
    expect(out).toMatch(/call records: 1\n {2}[0-9a-f-]{36} \+14155550127 -> sip:operator@/);
    expect(out).toMatch(/deleted the endpoint and the application/);

    // Every request reached the gateway, voice ones included, in the SDK's own shapes.
    const shapes = gatewayRequests()
      .slice(before)
      .map((r) =>
        r.replace(/[0-9a-f-]{36}|\/\d{6,}\//g, (id) => (id.startsWith('/') ? '/{n}/' : '{uuid}')),
      );
    expect(shapes).toEqual([
      'GET /v1/Account/{id}// 200',
      'POST /v1/Account/{id}/Application/ 201',
      'POST /v1/Account/{id}/Endpoint/ 201',
      'POST /v1/Account/{id}/Message/ 202',
      'POST /v1/Account/{id}/Call/ 201',
      'GET /v1/Account/{id}/Call/?status=live 200',
      'GET /v1/Account/{id}/Call/{uuid}?status=live 200',
      'GET /v1/Account/{id}/Call/?limit=5 200',
      'DELETE /v1/Account/{id}/Endpoint/{n}/ 204',
      'DELETE /v1/Account/{id}/Application/{n}/ 204',
    ]);
    await callee.settled(1);
    // The call reached the callee and its media: the answer XML's speech.
    expect(media.received.filter((p) => p.payloadType === 0).length).toBeGreaterThan(25);
    await smsc.waitForSubmits(1);
    expect(smsc.submits[0]).toMatchObject({ sourceAddr: NUMBER, destinationAddr: '447400123456' });
  });

  it("the guard catches what the SDK's url option alone does: a voice request to the public host", async () => {
    const program = `
      const plivo = require('plivo');
      const client = new plivo.Client(process.env.VOXGATE_AUTH_ID, process.env.VOXGATE_AUTH_TOKEN,
        { url: process.env.VOXGATE_URL + '/v1/Account/' + process.env.VOXGATE_AUTH_ID });
      client.applications.list({}).then(() => console.log('answered'), () => console.log('failed'));
    `;
    const child = spawn(process.execPath, ['-e', program], {
      env: { ...process.env, ...exampleEnv(gw), ...guarded },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    await new Promise((resolve) => child.once('exit', resolve));
    expect(out).toMatch(/loopback-only: refused a lookup of api\.plivo\.com/);
    expect(out).toMatch(/^failed$/m);
  });
});
