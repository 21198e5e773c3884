import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { registerEndpoint, udpChannel } from '../../support/sip-registration.js';
import { until } from '../../support/wait.js';

/**
 * A binding's time runs out while Redis hangs: the registrar's removal of it fails. It says
 * so in a warn line and tries again later; the gateway goes on (an unhandled rejection would
 * stop the process), and the endpoint reads as not registered meanwhile (bindings are read
 * with their expiry applied).
 */
let redis: RedisServer;
let gw: TestGateway;

beforeAll(async () => {
  redis = await startRedis();
  gw = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: { VOXGATE_SIP_MIN_EXPIRES: '2' },
  });
});

afterAll(async () => {
  redis.resume();
  await gw.close();
  await redis.stop();
});

describe('a binding that expires while the store hangs', () => {
  it('is reported and left for a later try, and the gateway goes on', async () => {
    const password = 'Expiring-Secret1';
    const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
      json: { username: 'expiring', password, alias: 'expiring' },
    });
    expect(created.status).toBe(201);
    const phone = await udpChannel(gw.gateway.sip.addresses.udp.port);
    try {
      const endpoint = { username: created.body.username as string, password };
      expect((await registerEndpoint(phone, endpoint, { expires: 2 })).status).toBe(200);
      redis.pause();
      await until(
        () => gw.logs.some((line) => line.includes('expired bindings not removed yet')),
        15_000,
      );
      redis.resume();
      // Once the store answers again (its breaker lets a request through after a moment).
      const path = `/v1/Account/${gw.main.id}/Endpoint/${created.body.endpoint_id as string}/`;
      let view = await gw.request('GET', path);
      await until(async () => (view = await gw.request('GET', path)).status === 200, 10_000);
      expect(view.body.sip_registered).toBe('false');
    } finally {
      phone.close();
    }
  }, 30_000);
});
