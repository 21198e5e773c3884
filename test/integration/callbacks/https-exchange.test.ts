import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestCertificate, type TestCertificate } from '../../support/tls-certificate.js';

const CHILD = fileURLToPath(new URL('./children/https-exchange.ts', import.meta.url));

describe('callbacks over HTTPS, through the connection pools and the outbound guard', () => {
  let certificate: TestCertificate;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    certificate = await makeTestCertificate();
    server = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`${req.method} ${req.headers.host} ${body}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server?.close();
    await certificate?.remove();
  });

  it('verifies the certificate against the URL host, not against the checked address it connects to', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', CHILD, String(port), 'localhost', 'callback.test'],
      { env: { ...process.env, NODE_EXTRA_CA_CERTS: certificate.certPath }, timeout: 30_000 },
    );
    const [byName, byOtherName] = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // Connected to 127.0.0.1 (the guard's check), verified as localhost, Host as the URL says.
    expect(byName).toMatchObject({
      host: 'localhost',
      ok: true,
      status: 200,
      body: `POST localhost:${port} a=1`,
    });
    // callback.test leads to 127.0.0.1, which the certificate carries, but the name is not.
    expect(byOtherName).toMatchObject({
      host: 'callback.test',
      ok: false,
      error: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  }, 40_000);
});
