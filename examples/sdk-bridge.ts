/**
 * A bridge for official SDKs that hard-code their API host: the Python SDK sends every
 * request to https://api.plivo.com whatever it is given. (For the Node SDK use
 * voxgateSdkClient, src/sdk/plivo-client.ts, which sends every request to voxgate with no
 * proxy.) The SDKs take an HTTPS proxy (Python: `proxies=`; Node: the `proxy` option or
 * HTTPS_PROXY); this is that proxy. For the hosts it is told to take it answers the tunnel
 * itself, presents a certificate for the host signed by a local certificate authority of its
 * own, and passes each request on to voxgate over plain HTTP. Tunnels to any other host are
 * refused: it is not an open proxy.
 *
 *   npm run example:sdk-bridge                     # proxy on 127.0.0.1:8043, gateway :8080
 *   npm run example:sdk-bridge -- --gateway http://10.0.0.5:8080 --hosts api.plivo.com
 *
 * The SDK's process must trust the authority (`ca.pem` in --dir, default data/sdk-bridge):
 * NODE_EXTRA_CA_CERTS for Node, `session.verify` for Python (README, Official SDKs). The
 * authority and certificates are made with the openssl command on the first start and kept.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { createSecureContext, TLSSocket } from 'node:tls';
import { gatewayUrl, now, numberSetting, setting } from './lib/settings.js';

const host = setting('host', 'SDK_BRIDGE_HOST', '127.0.0.1');
const port = numberSetting('port', 'SDK_BRIDGE_PORT', 8043);
const dir = resolve(setting('dir', 'SDK_BRIDGE_DIR', 'data/sdk-bridge'));
const hosts = setting('hosts', 'SDK_BRIDGE_HOSTS', 'api.plivo.com')
  .split(',')
  .map((h) => h.trim().toLowerCase())
  .filter(Boolean);
const gateway = new URL(gatewayUrl());

const log = (line: string) => console.log(`${now()} ${line}`);

/** The local authority, and a certificate for every bridged host signed by it. */
function certificates(): { key: Buffer; cert: Buffer; ca: string } {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  const leaf = join(dir, `${hosts.join('+')}.pem`);
  const leafKey = join(dir, `${hosts.join('+')}.key`);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  if (!existsSync(ca)) {
    log(`creating a local certificate authority in ${dir}`);
    openssl([
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'],
      ...['-nodes', '-days', '3650', '-subj', '/CN=voxgate sdk-bridge local CA'],
      ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=keyCertSign'],
      ...['-keyout', caKey, '-out', ca],
    ]);
  }
  if (!existsSync(leaf)) {
    const csr = join(dir, 'request.csr');
    const extensions = join(dir, 'extensions.cnf');
    execFileSync('sh', [
      '-c',
      `printf 'subjectAltName=%s\\nextendedKeyUsage=serverAuth\\n' "$1" > "$2"`,
      'sh',
      hosts.map((h) => `DNS:${h}`).join(','),
      extensions,
    ]);
    openssl([
      ...['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-subj', `/CN=${hosts[0]}`, '-keyout', leafKey, '-out', csr],
    ]);
    openssl([
      ...['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial'],
      ...['-days', '825', '-extfile', extensions, '-out', leaf],
    ]);
  }
  return { key: readFileSync(leafKey), cert: readFileSync(leaf), ca };
}

const { key, cert, ca } = certificates();
const secureContext = createSecureContext({ key, cert });

/** Requests that came through a tunnel, passed on to the gateway as they are. */
const forwarder = createServer((incoming: IncomingMessage, outgoing) => {
  const upstream = httpRequest(
    {
      host: gateway.hostname,
      port: gateway.port || 80,
      method: incoming.method,
      path: incoming.url,
      headers: { ...incoming.headers, host: gateway.host },
    },
    (answer) => {
      log(`${incoming.method} ${incoming.url} -> ${answer.statusCode}`);
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    },
  );
  upstream.on('error', (error) => {
    log(`${incoming.method} ${incoming.url}: the gateway did not answer (${error.message})`);
    if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'application/json' });
    outgoing.end(JSON.stringify({ error: `voxgate at ${gateway.origin} did not answer` }));
  });
  incoming.pipe(upstream);
});

const proxy = createServer((_request, response) => {
  response.writeHead(405, { 'content-type': 'text/plain' }).end('CONNECT only\n');
});

proxy.on('connect', (request: IncomingMessage, socket: Socket, head: Buffer) => {
  const [target = '', targetPort = '443'] = (request.url ?? '').toLowerCase().split(':');
  if (!hosts.includes(target) || targetPort !== '443') {
    log(`refused a tunnel to ${request.url}: not one of ${hosts.join(', ')}`);
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
    return;
  }
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head.length > 0) socket.unshift(head);
  const tls = new TLSSocket(socket, { isServer: true, secureContext });
  tls.on('error', (error) => log(`TLS with the SDK failed: ${error.message}`));
  forwarder.emit('connection', tls);
});

proxy.listen(port, host, () => {
  const { port: bound } = proxy.address() as AddressInfo;
  log(`sdk-bridge on http://${host}:${bound}: ${hosts.join(', ')} -> ${gateway.origin}`);
  log(`trust ${ca} in the SDK's process, e.g.:`);
  log(`  HTTPS_PROXY=http://${host}:${bound} NODE_EXTRA_CA_CERTS=${ca} node your-app.js`);
});
process.once('SIGINT', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
