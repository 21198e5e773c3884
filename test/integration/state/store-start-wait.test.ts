import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../support/free-port.js';
import { spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';
import { startRedisProcess, type RedisProcess } from '../../support/redis-cluster.js';
import { sleep, until } from '../../support/wait.js';

/** A gateway started before its Redis: it waits for it, within VOXGATE_STORE_START_WAIT. */
describe('a start before the store is up', () => {
  const gateways: GatewayProcess[] = [];
  const servers: RedisProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.stop();
    for (const server of servers.splice(0)) await server.kill();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('waits for Redis to come up, says so, and then starts with its main account stored there', async () => {
    const port = await freePort();
    const gateway = await spawnGateway({
      VOXGATE_REDIS_URL: `redis://127.0.0.1:${port}`,
      VOXGATE_AUTH_ID: 'MAWAITINGFORREDIS001',
      VOXGATE_AUTH_TOKEN: 'w'.repeat(40),
    });
    gateways.push(gateway);
    await until(() => gateway.stderr().includes('does not take writes yet'), 10_000);
    expect(gateway.stderr()).toMatch(/waited \d+ s of 60 s/);
    await sleep(1000);
    expect(gateway.child.exitCode).toBeNull();

    const dir = mkdtempSync(join(tmpdir(), 'voxgate-late-redis-'));
    dirs.push(dir);
    const redis = await startRedisProcess(dir, ['--appendonly', 'no'], undefined, port);
    servers.push(redis);
    await gateway.healthy();
    const auth = `Basic ${Buffer.from(`MAWAITINGFORREDIS001:${'w'.repeat(40)}`).toString('base64')}`;
    const res = await fetch(`http://127.0.0.1:${gateway.port}/v1/Account/MAWAITINGFORREDIS001/`, {
      headers: { authorization: auth },
    });
    expect(res.status).toBe(200);
    expect((await redis.client.keys('*')).some((key) => key.includes('MAWAITINGFORREDIS001'))).toBe(
      true,
    );
    // The token is a secret: the waiting lines never carry it.
    expect(gateway.stderr()).not.toContain('w'.repeat(40));
  });

  it('gives up after VOXGATE_STORE_START_WAIT seconds, exits 1 and says why', async () => {
    const port = await freePort();
    const gateway = await spawnGateway({
      VOXGATE_REDIS_URL: `redis://127.0.0.1:${port}`,
      VOXGATE_STORE_START_WAIT: '2',
    });
    gateways.push(gateway);
    await until(() => gateway.child.exitCode !== null, 15_000);
    expect(gateway.child.exitCode).toBe(1);
    expect(gateway.stderr()).toMatch(
      /voxgate: failed to start: the state store is unavailable: no write taken within \d s; the last refusal: /,
    );
  });
});
