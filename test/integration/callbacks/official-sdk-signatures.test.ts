import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as plivo from 'plivo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { numberWithApplication } from '../../support/example-process.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { StreamServer } from '../../support/stream-server.js';
import { until } from '../../support/wait.js';

/**
 * Existing applications of the public service, unchanged: they read the X-Plivo-Signature-*
 * headers and hand them to the official Node SDK's own validators (npm `plivo`). Real
 * callbacks from a real gateway (the answer URL fetch, the hangup callback, message status
 * callbacks, a stream's WebSocket upgrade) must pass them with the account's token, and fail
 * them with any other.
 */

/** What the application's validators said about one request. */
interface Verdict {
  method: string;
  path: string;
  params: Record<string, string>;
  v3: boolean;
  maV3: boolean;
  v2: boolean;
  maV2: boolean;
  /** The same validators given a token that is not the account's. */
  tamperedV3: boolean;
  tamperedV2: boolean;
}

/**
 * Validates the way applications written for the public service do: the URL rebuilt from
 * Host and the request line, the form body as the parameters of a POST.
 */
function validate(
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  params: Record<string, string>,
  authToken: string,
): Omit<Verdict, 'method' | 'path' | 'params'> {
  const v3Nonce = String(headers['x-plivo-signature-v3-nonce']);
  const v2Nonce = String(headers['x-plivo-signature-v2-nonce']);
  const v3 = (token: string, header: string) =>
    Boolean(
      plivo.validateV3Signature(method, url, v3Nonce, token, String(headers[header]), params),
    );
  const v2 = (token: string, header: string) =>
    Boolean(plivo.validateSignature(url, v2Nonce, String(headers[header]), token));
  const other = `${authToken.slice(0, -1)}${authToken.endsWith('x') ? 'y' : 'x'}`;
  return {
    v3: v3(authToken, 'x-plivo-signature-v3'),
    maV3: v3(authToken, 'x-plivo-signature-ma-v3'),
    v2: v2(authToken, 'x-plivo-signature-v2'),
    maV2: v2(authToken, 'x-plivo-signature-ma-v2'),
    tamperedV3: v3(other, 'x-plivo-signature-v3'),
    tamperedV2: v2(other, 'x-plivo-signature-v2'),
  };
}

/** The client application: answers XML at /answer, 200 elsewhere, and judges every request. */
async function startApplication(
  authToken: string,
  answer: () => string,
): Promise<{ server: Server; url: string; verdicts: Verdict[] }> {
  const verdicts: Verdict[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const url = `http://${req.headers.host}${req.url}`;
      const method = req.method ?? '';
      const params = method === 'POST' ? Object.fromEntries(new URLSearchParams(body)) : {};
      verdicts.push({
        method,
        path: new URL(url).pathname,
        params,
        ...validate(method, url, req.headers, params, authToken),
      });
      if (req.url?.startsWith('/answer'))
        res.writeHead(200, { 'content-type': 'application/xml' }).end(answer());
      else res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, verdicts };
}

const ACCEPTED = {
  v3: true,
  maV3: true,
  v2: true,
  maV2: true,
  tamperedV3: false,
  tamperedV2: false,
};
const NUMBER = '14155550131';

let gw: TestGateway;
let smsc: SmscSimulator;
let bot: StreamServer;
let application: Awaited<ReturnType<typeof startApplication>>;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
  gw = await startGateway({ listen: true, env: { VOXGATE_SMPP_URL: smsc.url('enquire_link=1') } });
  bot = await StreamServer.start();
  application = await startApplication(
    gw.main.token,
    () => `<Response><Stream>${bot.url}?team=blue</Stream><Wait length="1"/></Response>`,
  );
  await numberWithApplication(gw, NUMBER, { answer_url: `${application.url}/answer` });
  await smsc.waitForBind();
});

afterAll(async () => {
  await Promise.all(carriers.map((c) => c.stop()));
  await Promise.all(peers.map((p) => p.close()));
  await gw?.close();
  await smsc?.stop();
  await bot?.close();
  application?.server.close();
});

describe("the official Node SDK's validators on real callbacks", () => {
  it('accept the answer URL fetch, the hangup callback and the stream upgrade, and refuse another token', async () => {
    // ClientApp only stands in for the carrier call's plumbing; the answer is the application's.
    const unused = await ClientApp.start();
    await placeCarrierCall({ gw, app: unused, carriers, peers }, '<Response/>', {
      answer_url: `${application.url}/answer?lang=en`,
      answer_method: 'GET',
      hangup_url: `${application.url}/hangup`,
    });
    await unused.close();
    const ws = await bot.connection(0);
    await until(() => application.verdicts.some((v) => v.path === '/hangup'), 15_000);

    const answers = application.verdicts.filter((v) => v.path === '/answer');
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ method: 'GET', ...ACCEPTED });
    const hangups = application.verdicts.filter((v) => v.path === '/hangup');
    expect(hangups).toHaveLength(1);
    expect(hangups[0]).toMatchObject({ method: 'POST', ...ACCEPTED });
    expect(hangups[0]!.params.CallStatus).toBe('completed');

    // The upgrade: a GET of the stream URL, validated the same way.
    const upgrade = ws.request;
    const url = `ws://${upgrade.headers.host}${upgrade.url}`;
    expect(validate('GET', url, upgrade.headers, {}, gw.main.token)).toEqual(ACCEPTED);
    // Both header sets carry the same values.
    for (const suffix of ['v2', 'ma-v2', 'v2-nonce', 'v3', 'ma-v3', 'v3-nonce'])
      expect(upgrade.headers[`x-plivo-signature-${suffix}`]).toBe(
        upgrade.headers[`x-service-signature-${suffix}`],
      );
  });

  it('accept every message status callback and refuse another token', async () => {
    const sent = await gw.request('POST', `/v1/Account/${gw.main.id}/Message/`, {
      json: { src: NUMBER, dst: '447400123456', text: 'hello', url: `${application.url}/status` },
    });
    expect(sent.status).toBe(202);
    const statuses = () => application.verdicts.filter((v) => v.path === '/status');
    await until(() => statuses().some((v) => v.params.Status === 'delivered'), 15_000);
    expect(statuses().map((v) => v.params.Status)).toEqual(['queued', 'sent', 'delivered']);
    for (const verdict of statuses())
      expect(verdict).toMatchObject({ method: 'POST', ...ACCEPTED });
  });
});
