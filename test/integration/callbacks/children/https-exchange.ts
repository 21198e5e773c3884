/**
 * Run by https-exchange.test.ts in a process that trusts the test certificate
 * (NODE_EXTRA_CA_CERTS is read only at start): exchanges with the HTTPS server on the port
 * given, by the names given, and prints what each gave as JSON lines.
 */
import { httpExchange } from '../../../../src/callbacks/http-exchange.js';
import { OutboundGuard, tableResolver } from '../../../../src/core/outbound-guard.js';

const [port, ...hosts] = process.argv.slice(2);
const guard = new OutboundGuard({
  policy: { profile: 'self-hosted', ownPorts: [] },
  // A name the certificate does not carry, leading to an address it does carry.
  resolve: tableResolver({ 'callback.test': ['127.0.0.1'] }),
});
for (const host of hosts) {
  const result = await httpExchange(
    { url: new URL(`https://${host}:${port}/status`), method: 'POST', headers: {}, body: 'a=1' },
    { timeoutMs: 5000, guard, readBody: { maxBytes: 1000 } },
  );
  console.log(
    JSON.stringify({ host, ...result, body: result.ok ? result.body?.toString() : null }),
  );
}
process.exit(0);
