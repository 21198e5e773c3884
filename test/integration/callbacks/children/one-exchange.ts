/**
 * Run by http-worker.test.ts: one request to the URL given, its outcome printed as JSON; then
 * nothing, so the process ends only if the HTTP worker stops holding it once idle.
 */
import { httpExchange } from '../../../../src/callbacks/http-exchange.js';
import { OutboundGuard } from '../../../../src/core/outbound-guard.js';

const guard = new OutboundGuard({ policy: { profile: 'self-hosted', ownPorts: [] } });
const result = await httpExchange(
  { url: new URL(process.argv[2]!), method: 'GET', headers: {} },
  { timeoutMs: 5000, guard, readBody: { maxBytes: 100 } },
);
console.log(JSON.stringify({ ...result, body: result.ok ? result.body?.toString() : null }));
