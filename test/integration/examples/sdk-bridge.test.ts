import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleEnv, startExample, type ExampleProcess } from '../../support/example-process.js';
import { freePort } from '../../support/free-port.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';

/**
 * examples/sdk-bridge.ts, the HTTPS proxy for SDKs that hard-code the public API host (the
 * Python SDK sends every request there): a client that tunnels to api.plivo.com through it,
 * trusting the bridge's own authority, reaches voxgate; a tunnel to any other host is refused.
 */
let gw: TestGateway;
let bridge: ExampleProcess;
let bridgePort: number;
let dir: string;

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  dir = await mkdtemp(join(tmpdir(), 'voxgate-sdk-bridge-'));
  bridgePort = await freePort();
  bridge = startExample('sdk-bridge', ['--port', String(bridgePort), '--dir', dir], exampleEnv(gw));
  await bridge.waitFor(/sdk-bridge on http/);
});

afterAll(async () => {
  await bridge?.stop();
  await gw?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One request through the bridge as an SDK's HTTPS proxy support makes it: CONNECT, then TLS. */
function throughBridge(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const tunnel = request({
      host: '127.0.0.1',
      port: bridgePort,
      method: 'CONNECT',
      path: 'api.plivo.com:443',
    });
    tunnel.on('error', reject);
    tunnel.on('connect', (answer, socket) => {
      if (answer.statusCode !== 200) return reject(new Error(`CONNECT ${answer.statusCode}`));
      const tls = connectTls({
        socket,
        servername: 'api.plivo.com',
        ca: readFileSync(join(dir, 'ca.pem')),
      });
      const auth = Buffer.from(`${gw.main.id}:${gw.main.token}`).toString('base64');
      let text = '';
      tls.on('data', (d) => (text += String(d)));
      tls.on('error', reject);
      tls.on('end', () => resolve(text));
      tls.write(
        `GET ${path} HTTP/1.1\r\nHost: api.plivo.com\r\nAuthorization: Basic ${auth}\r\n` +
          'Connection: close\r\n\r\n',
      );
    });
    tunnel.end();
  });
}

describe('examples/sdk-bridge.ts', () => {
  it('takes a tunnel to api.plivo.com to voxgate, with the request as the Python SDK shapes it', async () => {
    const answer = await throughBridge(`/v1/Account/${gw.main.id}/`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain(`"auth_id":"${gw.main.id}"`);
    await bridge.waitFor(/GET \/v1\/Account\/MA\w+\/ -> 200/);
  });

  it('refuses tunnels to hosts it does not take: it is not an open proxy', async () => {
    const socket = connectTcp(bridgePort, '127.0.0.1');
    socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const answer = await new Promise<string>((resolve) =>
      socket.once('data', (data) => resolve(String(data))),
    );
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    await bridge.waitFor(/refused a tunnel to example\.com:443/);
  });
});
