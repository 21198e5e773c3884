/**
 * The official Node SDK 0.4.2 (devDependency `plivo-legacy`, the last with IncomingCarrier
 * calls) run the way its users run it: RestAPI({ authId, authToken }) with its own default
 * host, api.plivo.com, reached through the HTTPS proxy its `request` package takes from
 * HTTPS_PROXY. test/support/legacy-sdk.ts gives it the proxy, the authority to trust
 * (NODE_EXTRA_CA_CERTS) and the loopback-only guard, all through the environment.
 *
 * Each line on stdin is one SDK call, `{"call": "create_incoming_carrier", "params": {...},
 * "as": {"id": ..., "token": ...}}`; each line on stdout is what the SDK called back with,
 * `{"status": 201, "body": {...}}`, in the same order.
 *
 * Plain JavaScript: the SDK is CommonJS without typings.
 */
import { createInterface } from 'node:readline';
import plivo from 'plivo-legacy';

const CALLS = new Set([
  'get_incoming_carriers',
  'get_incoming_carrier',
  'create_incoming_carrier',
  'modify_incoming_carrier',
  'delete_incoming_carrier',
]);

/** One SDK call, resolved with the (status, body) the SDK called back with. */
function run({ call, params, as }) {
  if (!CALLS.has(call)) return Promise.resolve({ error: `not an IncomingCarrier call: ${call}` });
  const api = plivo.RestAPI({ authId: as.id, authToken: as.token });
  return new Promise((resolve) => {
    api[call](params, (status, body) => resolve({ status, body: body ?? null }));
  });
}

// On a GET or DELETE that fails before an answer the SDK reads `response.statusCode` of
// nothing and throws out of its callback: said on stdout as the answer, and the end.
process.on('uncaughtException', (error) => {
  process.stdout.write(`${JSON.stringify({ error: String(error) })}\n`);
  process.exit(1);
});

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line.trim() === '') continue;
  process.stdout.write(`${JSON.stringify(await run(JSON.parse(line)))}\n`);
}
