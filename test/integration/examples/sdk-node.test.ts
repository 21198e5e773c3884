import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exampleEnv,
  numberWithApplication,
  startExample,
  type ExampleProcess,
} from '../../support/example-process.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { freePort } from '../../support/free-port.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';

/**
 * examples/sdk-node.ts: the official Node SDK (npm plivo) sends an SMS through its `url`
 * option, and places and lists calls (which it sends to its hard-coded voice host) through
 * examples/sdk-bridge.ts as its `proxy`.
 */
let gw: TestGateway;
let smsc: SmscSimulator;
let bridge: ExampleProcess;
let bridgePort: number;
let dir: string;
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
  dir = await mkdtemp(join(tmpdir(), 'voxgate-sdk-bridge-'));
  bridgePort = await freePort();
  bridge = startExample('sdk-bridge', ['--port', String(bridgePort), '--dir', dir], exampleEnv(gw));
  await bridge.waitFor(/sdk-bridge on http/);
  await smsc.waitForBind();
});

afterAll(async () => {
  await bridge?.stop();
  await callee?.stop();
  await media?.close();
  await gw?.close();
  await smsc?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('examples/sdk-node.ts through examples/sdk-bridge.ts', () => {
  it('sends an SMS, places a call to a SIP URI, and lists live calls and call records', async () => {
    const sdk = startExample(
      'sdk-node',
      [
        ...['--proxy', `http://127.0.0.1:${bridgePort}`, '--from', NUMBER],
        ...['--to', `sip:operator@127.0.0.1:${callee.port}`, '--sms-to', '447400123456'],
      ],
      { ...exampleEnv(gw), NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') },
    );
    expect(await sdk.exited).toBe(0);
    const out = sdk.output();
    expect(out).toMatch(/SMS: message\(s\) queued \["[0-9a-f-]{36}"\]/);
    expect(out).toMatch(/call: call fired, request [0-9a-f-]{36}/);
    expect(out).toMatch(
      /live calls: 1\n {2}[0-9a-f-]{36} \+14155550127 -> sip:operator@127\.0\.0\.1:\d+ in-progress/,
    );
    expect(out).toMatch(/call records: 1\n {2}[0-9a-f-]{36} \+14155550127 -> sip:operator@/);
    // The voice requests went through the bridge; the SMS went straight to the `url`.
    expect(bridge.lines(/POST \/v1\/Account\/MA\w+\/Call\/ -> 201/)).toHaveLength(1);
    expect(bridge.lines(/GET \/v1\/Account\/MA\w+\/Call\/\?status=live -> 200/)).toHaveLength(1);
    expect(bridge.lines(/Message/)).toHaveLength(0);
    await callee.settled(1);
    // The call reached the callee and its media: the answer XML's speech.
    expect(media.received.filter((p) => p.payloadType === 0).length).toBeGreaterThan(25);
    await smsc.waitForSubmits(1);
    expect(smsc.submits[0]).toMatchObject({ sourceAddr: NUMBER, destinationAddr: '447400123456' });
    expect(smsc.submits[0]!.shortMessage.toString('latin1')).toBe('Hello from the Node SDK');
  });

  it('refuses tunnels to hosts it does not take: it is not an open proxy', async () => {
    const socket = connect(bridgePort, '127.0.0.1');
    socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const answer = await new Promise<string>((resolve) =>
      socket.once('data', (data) => resolve(String(data))),
    );
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    await bridge.waitFor(/refused a tunnel to example\.com:443/);
  });
});
