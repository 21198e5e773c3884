import type { FastifyInstance } from 'fastify';
import { ApiError } from '../core/errors.js';
import { sendError } from './error-handler.js';

/**
 * Fastify answers 404 for a known path with an unknown method; clients expect 405 with Allow.
 * Every route path is kept as a pattern; the not-found handler tells the two cases apart.
 */
export function installMethodNotAllowed(app: FastifyInstance): void {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    const source = route.url
      .replace(/\/+$/, '')
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const pattern = new RegExp(`^${source}/?$`);
    let entry = routes.find((r) => r.pattern.source === pattern.source);
    if (!entry) {
      entry = { pattern, methods: new Set() };
      routes.push(entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = new Set<string>();
    for (const route of routes) {
      if (route.pattern.test(path)) for (const m of route.methods) allowed.add(m);
    }
    allowed.delete('HEAD');
    if (allowed.size > 0) {
      const error = new ApiError(
        'method_not_allowed',
        `method ${request.method} is not allowed on ${path}`,
      );
      reply.header('allow', [...allowed].sort().join(', '));
      return sendError(request, reply, error.status, error.message);
    }
    return sendError(request, reply, 404, `no resource at ${path}`);
  });
}
