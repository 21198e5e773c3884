import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  BIND_STALLED_AFTER_MS,
  operationalRoutes,
  type HealthBind,
} from '../../../src/api/operational-routes.js';

async function health(binds: HealthBind[]) {
  const app = Fastify();
  operationalRoutes(app, { isReady: () => true, registry: new Registry(), binds: () => binds });
  const res = await app.inject({ method: 'GET', url: '/health' });
  await app.close();
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

describe('/health and the SMPP binds', () => {
  it('says messaging is stalled when a bound bind has had work it did not send for too long', async () => {
    const { status, body } = await health([
      { carrier: 'c1', bind: 1, state: 'bound', idleWithWorkMs: 0 },
      { carrier: 'c1', bind: 2, state: 'bound', idleWithWorkMs: BIND_STALLED_AFTER_MS + 1 },
    ]);
    // The node still takes calls and requests: shown, not taken out of the balancer.
    expect(status).toBe(200);
    expect(body.messaging).toBe('stalled');
    expect(body.smpp_binds).toEqual([
      { carrier: 'c1', bind: 1, state: 'bound', sending: true, waiting_ms: 0 },
      {
        carrier: 'c1',
        bind: 2,
        state: 'bound',
        sending: false,
        waiting_ms: BIND_STALLED_AFTER_MS + 1,
      },
    ]);
  });

  it('does not call a bind that is reconnecting stalled, and says nothing without binds', async () => {
    const down = await health([
      { carrier: 'c1', bind: 1, state: 'connecting', idleWithWorkMs: BIND_STALLED_AFTER_MS * 2 },
    ]);
    expect(down.body.messaging).toBe('ok');
    expect(down.body.smpp_binds[0].state).toBe('connecting');
    const none = await health([]);
    expect(none.body.messaging).toBeUndefined();
    expect(none.body.status).toBe('ok');
  });
});
