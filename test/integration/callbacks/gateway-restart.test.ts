import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureV2, signatureV3 } from '../../../src/callbacks/index.js';
import { startGateway } from '../../support/gateway.js';
import { startRedisCluster } from '../../support/redis-cluster.js';
import { startRedis } from '../../support/redis-server.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

const env = {
  VOXGATE_AUTH_ID: 'MA' + 'RESTART'.repeat(2) + 'TEST',
  VOXGATE_AUTH_TOKEN: 't'.repeat(40),
};

let server: Server;
let url: string;
const received: Received[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += String(d)));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      // The client application is down for the first attempt only.
      res.writeHead(received.length === 1 ? 500 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/status`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

// On one server, and on a Redis Cluster of three masters, where the queue is `{name}`.
describe.each([
  ['one Redis server', startRedis],
  ['a Redis Cluster', startRedisCluster],
] as const)('on %s', (_name, start) => {
  let redis: { url: string; stop(): Promise<void> };
  beforeAll(async () => {
    redis = await start();
    received.length = 0;
  }, 30_000);
  afterAll(async () => {
    await redis?.stop();
  });

  it('delivers a webhook retry scheduled before a gateway restart, after it, correctly signed', async () => {
    const first = await startGateway({ redisUrl: redis.url, env });
    const sub = await first.subaccount('messaging');
    const delivered = await first.gateway.callbacks.send({
      url,
      method: 'POST',
      params: { MessageUUID: 'a6b2c3d4-0000-4000-8000-000000000001', Status: 'delivered' },
      accountId: sub.id,
      retryDelaysSeconds: [2],
    });
    expect(delivered).toBe(false);
    expect(received).toHaveLength(1);
    await first.close();

    const second = await startGateway({ redisUrl: redis.url, env });
    try {
      const deadline = Date.now() + 20_000;
      while (received.length < 2 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(received).toHaveLength(2);
      const retry = received[1]!;
      expect(new URLSearchParams(retry.body).get('MessageUUID')).toBe(
        'a6b2c3d4-0000-4000-8000-000000000001',
      );
      const signed = {
        method: 'POST' as const,
        url,
        params: { MessageUUID: 'a6b2c3d4-0000-4000-8000-000000000001', Status: 'delivered' },
      };
      const v2Nonce = String(retry.headers['x-service-signature-v2-nonce']);
      const v3Nonce = String(retry.headers['x-service-signature-v3-nonce']);
      expect(retry.headers['x-service-signature-v2']).toBe(signatureV2(sub.token, url, v2Nonce));
      expect(retry.headers['x-service-signature-ma-v2']).toBe(
        signatureV2(env.VOXGATE_AUTH_TOKEN, url, v2Nonce),
      );
      expect(retry.headers['x-service-signature-v3']).toBe(signatureV3(sub.token, signed, v3Nonce));
      expect(retry.headers['x-service-signature-ma-v3']).toBe(
        signatureV3(env.VOXGATE_AUTH_TOKEN, signed, v3Nonce),
      );
      expect(JSON.stringify(retry.headers)).not.toContain(sub.token);
    } finally {
      await second.close();
    }
  });
});
