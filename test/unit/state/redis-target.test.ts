import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { parseRedisTarget } from '../../../src/state/redis-target.js';

describe('parseRedisTarget', () => {
  it('keeps a one-server URL as ioredis reads it', () => {
    expect(parseRedisTarget('redis://:pw@10.0.0.1:6380/2')).toEqual({
      kind: 'server',
      url: 'redis://:pw@10.0.0.1:6380/2',
    });
    expect(parseRedisTarget('rediss://cache.example.com').kind).toBe('server');
  });

  it('reads a cluster as a list of seed nodes, with credentials and TLS', () => {
    expect(parseRedisTarget('redis+cluster://10.0.0.1:7000,10.0.0.2:7001,node3')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: 'node3', port: 6379 },
      ],
      tls: false,
    });
    expect(parseRedisTarget('rediss+cluster://app:p%40ss@[::1]:7000')).toEqual({
      kind: 'cluster',
      nodes: [{ host: '::1', port: 7000 }],
      tls: true,
      username: 'app',
      password: 'p@ss',
    });
  });

  it('reads Sentinels, the master name, a database and the Sentinel password', () => {
    expect(
      parseRedisTarget('redis+sentinel://:pw@s1:26379,s2,s3:26380/mymaster/3?sentinel_password=sp'),
    ).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
        { host: 's3', port: 26380 },
      ],
      masterName: 'mymaster',
      db: 3,
      tls: false,
      password: 'pw',
      sentinelPassword: 'sp',
    });
  });

  it('refuses what it cannot connect to, saying which forms it takes', () => {
    for (const bad of [
      'http://x',
      'redis+sentinel://s1:26379',
      'redis+sentinel://s1/master/x',
      'redis+cluster://a:70000',
      'redis+cluster://a:7000/0',
      'redis+cluster://',
      'redis+mesh://a:1',
    ])
      expect(() => parseRedisTarget(bad), bad).toThrow(/redis\+cluster:\/\/host:port/);
  });
});

describe('VOXGATE_REDIS_URL and VOXGATE_REDIS_WAIT', () => {
  const load = (env: Record<string, string>) => loadConfig({ VOXGATE_DATA_DIR: '', ...env });

  it('waits for replicas by default on Sentinel and Cluster only', () => {
    expect(load({ VOXGATE_REDIS_URL: 'redis://h:1' }).redisWaitForReplicas).toBe(false);
    expect(load({ VOXGATE_REDIS_URL: 'redis+cluster://h:1' }).redisWaitForReplicas).toBe(true);
    expect(load({ VOXGATE_REDIS_URL: 'redis+sentinel://h:1/m' }).redisWaitForReplicas).toBe(true);
    expect(
      load({ VOXGATE_REDIS_URL: 'redis+sentinel://h:1/m', VOXGATE_REDIS_WAIT: 'none' })
        .redisWaitForReplicas,
    ).toBe(false);
    expect(
      load({ VOXGATE_REDIS_URL: 'redis://h:1', VOXGATE_REDIS_WAIT: 'replicas' })
        .redisWaitForReplicas,
    ).toBe(true);
  });

  it('stops the start with a message naming the variable', () => {
    expect(() => load({ VOXGATE_REDIS_URL: 'redis+cluster://h:1/x' })).toThrow(ConfigError);
    expect(() => load({ VOXGATE_REDIS_URL: 'redis+sentinel://h:1' })).toThrow(
      /VOXGATE_REDIS_URL=.*master name/,
    );
    expect(() => load({ VOXGATE_REDIS_WAIT: 'always' })).toThrow(/VOXGATE_REDIS_WAIT/);
  });
});
