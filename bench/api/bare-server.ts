/**
 * The baseline server: bare Fastify answering the gateway's URLs with fixed JSON bodies captured
 * from the gateway, so it sends the same bytes with no auth, no store and no serialisation.
 *
 *   node --import tsx bench/api/bare-server.ts <port> <bodies.json>
 */
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply } from 'fastify';
import type { BareServerBodies } from './bare-server-process.js';

const [port, bodiesFile] = process.argv.slice(2);
if (!port || !bodiesFile) throw new Error('usage: bare-server.ts <port> <bodies.json>');
const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8')) as BareServerBodies;

const app = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
const answer = (body: string) => ({
  handler: async (_request: unknown, reply: FastifyReply) =>
    reply.type('application/json; charset=utf-8').send(body),
});
app.get('/health', answer('{"status":"ok"}'));
app.get('/v1/Account/:auth_id/:resource/:id/', answer(bodies.detail));
app.get('/v1/Account/:auth_id/:resource/', answer(bodies.list));
await app.listen({ host: '127.0.0.1', port: Number(port) });

const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
