import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

/** /health, /metrics and /docs: unauthenticated, outside /v1. */
export function operationalRoutes(
  app: FastifyInstance,
  options: { isReady: () => boolean; registry: Registry },
): void {
  const { registry } = options;
  collectDefaultMetrics({ register: registry, prefix: 'voxgate_' });
  const requests = new Counter({
    name: 'voxgate_http_requests_total',
    help: 'REST requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    requests.inc({
      method: request.method,
      route: request.routeOptions.url ?? 'unknown',
      status: reply.statusCode,
    });
  });

  app.get('/health', { schema: { hide: true } }, async (request, reply) => {
    const ready = options.isReady();
    return reply
      .code(ready ? 200 : 503)
      .send({ api_id: request.id, status: ready ? 'ok' : 'starting' });
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics());
  });
  app.get('/docs', { schema: { hide: true } }, async () => app.swagger());
}
