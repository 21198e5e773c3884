import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import type { NodeInfo } from '../cluster/node-registry.js';

/** How long /health waits for the store to answer: a probe is answered within a second. */
export const HEALTH_STORE_WAIT_MS = 500;

/**
 * A bound SMPP bind whose submits have waited this long while it sent nothing is stuck: longer
 * than a carrier's response timeout (10 s by default) and a throttling pause together.
 */
export const BIND_STALLED_AFTER_MS = 30_000;

/** An SMPP bind as /health shows it. */
export interface HealthBind {
  carrier: string;
  bind: number;
  state: string;
  idleWithWorkMs: number;
}

/** /health and /metrics: unauthenticated, outside /v1 (as /docs is, see api-reference.ts). */
export function operationalRoutes(
  app: FastifyInstance,
  options: {
    isReady: () => boolean;
    registry: Registry;
    /** This node and the peers it sees (none without Redis). */
    node?: () => { id: string; state: 'active' | 'draining'; peers: Promise<NodeInfo[]> };
    /** Resolves when the shared store (Redis) answers; absent, the store is in-process. */
    storeAnswers?: () => Promise<void>;
    /** This node's SMPP binds. */
    binds?: () => HealthBind[];
  },
): void {
  const { registry } = options;
  collectDefaultMetrics({ register: registry, prefix: 'voxgate_' });
  const requests = new Counter({
    name: 'voxgate_http_requests_total',
    help: 'REST requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  app.addHook('onResponse', (request, reply, done) => {
    requests.inc({
      method: request.method,
      route: request.routeOptions.url ?? 'unknown',
      status: reply.statusCode,
    });
    done();
  });

  // 200 when the node takes work; 503 while it starts or drains, or while the store does not
  // answer (its requests would all answer 503): a load balancer moves on. Probes and scrapes
  // come every few seconds from every balancer and collector: their requests are not logged at
  // info.
  app.get('/health', { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
    const ready = options.isReady();
    // A probe gives up after a second or two: the store gets a part of that, never all.
    const node = options.node?.();
    const [peers, store] = await Promise.all([
      node ? withinHealthWait(node.peers).catch(() => null) : null,
      options.storeAnswers
        ? withinHealthWait(options.storeAnswers()).then(
            () => 'ok' as const,
            () => 'unavailable' as const,
          )
        : ('ok' as const),
    ]);
    const draining = node?.state === 'draining';
    const status = !ready
      ? 'starting'
      : draining
        ? 'draining'
        : store === 'unavailable'
          ? 'store_unavailable'
          : 'ok';
    // A stuck bind does not stop the node taking calls and requests: it is shown, not a 503.
    const binds = (options.binds?.() ?? []).map((b) => ({
      carrier: b.carrier,
      bind: b.bind,
      state: b.state,
      sending: !(b.state === 'bound' && b.idleWithWorkMs >= BIND_STALLED_AFTER_MS),
      waiting_ms: b.idleWithWorkMs,
    }));
    return reply.code(status === 'ok' ? 200 : 503).send({
      api_id: request.id,
      status,
      store,
      ...(binds.length > 0
        ? { messaging: binds.every((b) => b.sending) ? 'ok' : 'stalled', smpp_binds: binds }
        : {}),
      ...(node
        ? {
            node: { id: node.id, state: node.state },
            peers: peers?.map((p) => ({
              id: p.id,
              state: p.state,
              calls: p.calls,
              binds: p.binds ?? [],
              sip: p.sip,
              http: p.http,
              heartbeat_at: new Date(p.heartbeatAt).toISOString(),
            })),
          }
        : {}),
    });
  });
  app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}

/** `work`, or a rejection once HEALTH_STORE_WAIT_MS has passed. */
async function withinHealthWait<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error('the store did not answer in time')),
      HEALTH_STORE_WAIT_MS,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
