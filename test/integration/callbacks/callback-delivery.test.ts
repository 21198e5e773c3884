import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BullMqRetryQueue } from '../../../src/callbacks/bullmq-retry-queue.js';
import { CallbackDelivery, type CallbackJob } from '../../../src/callbacks/callback-delivery.js';
import type { RetryQueue } from '../../../src/callbacks/retry-queue.js';
import { TimerRetryQueue } from '../../../src/callbacks/timer-retry-queue.js';
import { newAuthId, newAuthToken } from '../../../src/core/ids.js';
import { freePort } from '../../support/free-port.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';
import { AccountKeys, DeliveryEvents, RecordedLog } from './delivery-events.js';

const accountId = newAuthId('SA');
const tokens = { accountToken: newAuthToken(), mainToken: newAuthToken() };

let redis: RedisServer;
let app: ClientApp;
const opened: CallbackDelivery[] = [];

beforeAll(async () => {
  [redis, app] = await Promise.all([startRedis(), ClientApp.start()]);
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((delivery) => delivery.close()));
  app.reset();
  await redis.flush();
});

afterAll(async () => {
  await app?.close();
  await redis?.stop();
});

type QueueKind = 'timers' | 'bullmq';

function newQueue(kind: QueueKind): RetryQueue<CallbackJob> {
  return kind === 'timers'
    ? new TimerRetryQueue<CallbackJob>()
    : new BullMqRetryQueue<CallbackJob>({ redisUrl: redis.url });
}

function newDelivery(kind: QueueKind) {
  const keys = new AccountKeys();
  keys.accounts.set(accountId, tokens);
  const events = new DeliveryEvents();
  const log = new RecordedLog();
  const delivery = new CallbackDelivery({ keys, queue: newQueue(kind), delegate: events, log });
  opened.push(delivery);
  return { delivery, events, log, keys };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each<QueueKind>(['timers', 'bullmq'])('callback delivery, retries on %s', (kind) => {
  it('POSTs the params form-encoded, signed with the account and main tokens', async () => {
    const { delivery, events } = newDelivery(kind);
    const params = { MessageUUID: 'a1', Status: 'delivered', From: '+14155550100', Text: 'a b&c' };
    const delivered = await delivery.send({
      url: `${app.baseUrl}/status?tag=x%20y`,
      method: 'POST',
      params,
      accountId,
    });

    expect(delivered).toBe(true);
    const [received] = await app.waitForRequests(1);
    expect(received!.method).toBe('POST');
    expect(received!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(received!.body))).toEqual(params);
    expect(new URL(received!.url).search).toBe('?tag=x%20y');
    expectValidSignatures(received!, tokens);
    expect(events.of('delivered')).toMatchObject([{ attempts: 1, status: 200 }]);
  });

  it('sends credentials given in the URL as Basic authorization, signed over the URL without them', async () => {
    const { delivery } = newDelivery(kind);
    const withCredentials = app.baseUrl.replace('http://', 'http://user:p%40ss@');
    expect(
      await delivery.send({
        url: `${withCredentials}/status`,
        method: 'POST',
        params: { Status: 'sent' },
        accountId,
      }),
    ).toBe(true);

    const [received] = await app.waitForRequests(1);
    expect(received!.headers.authorization).toBe(
      `Basic ${Buffer.from('user:p@ss').toString('base64')}`,
    );
    expectValidSignatures(received!, tokens);
  });

  it('GETs with the params merged into the query string, signed', async () => {
    const { delivery } = newDelivery(kind);
    await delivery.send({
      url: `${app.baseUrl}/answer?app=7&From=old`,
      method: 'GET',
      params: { From: '+14155550100', Digits: '12#' },
      accountId,
    });

    const [received] = await app.waitForRequests(1);
    expect(received!.method).toBe('GET');
    expect(received!.body).toBe('');
    const query = Object.fromEntries(new URL(received!.url).searchParams);
    expect(query).toEqual({ app: '7', From: '+14155550100', Digits: '12#' });
    expectValidSignatures(received!, tokens);
  });

  it('retries a non-2xx answer after the requested delay, with a new nonce', async () => {
    const { delivery, events } = newDelivery(kind);
    app.replyWith(503);
    const delivered = await delivery.send({
      url: `${app.baseUrl}/status`,
      method: 'POST',
      params: { Status: 'sent' },
      accountId,
      retryDelaysSeconds: [1, 1],
    });

    expect(delivered).toBe(false);
    expect(events.of('retry')).toMatchObject([{ attempts: 1, status: 503, delayMs: 1000 }]);
    const report = await events.waitFor('delivered');
    expect(report).toMatchObject({ attempts: 2, status: 200 });
    const [first, second] = app.received;
    // Not earlier than asked; lateness is not judged here.
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(900);
    expectValidSignatures(second!, tokens);
    const nonce = (r: typeof first) => r!.headers['x-service-signature-v3-nonce'];
    expect(nonce(second)).not.toBe(nonce(first));
  });

  it('retries when the receiver does not answer in time', async () => {
    const { delivery, events } = newDelivery(kind);
    app.replyWith('hang');
    const delivered = await delivery.send({
      url: `${app.baseUrl}/slow`,
      method: 'GET',
      params: { CallUUID: 'c1' },
      accountId,
      retryDelaysSeconds: [1],
      timeoutMs: 300,
    });

    expect(delivered).toBe(false);
    expect(events.of('retry')[0]?.error).toBe('no response within 300 ms');
    expect(await events.waitFor('delivered')).toMatchObject({ attempts: 2 });
    expect(app.received).toHaveLength(2);
  });

  it('gives up when the retries are exhausted, and logs no secret', async () => {
    const { delivery, events, log } = newDelivery(kind);
    app.replyWith(500, 500, 500);
    const url = `${app.baseUrl}/status?secret=s3cr3t`;
    await delivery.send({
      url,
      method: 'POST',
      params: { MessageUUID: 'm1' },
      accountId,
      retryDelaysSeconds: [0.3, 0.3],
    });

    const report = await events.waitFor('gaveUp');
    expect(report).toMatchObject({ attempts: 3, status: 500, error: 'HTTP 500' });
    expect(app.received).toHaveLength(3);
    const gaveUpLine = log.lines.find((line) => line.includes('giving up'));
    expect(JSON.parse(gaveUpLine!)).toMatchObject({
      level: 'warn',
      url: `${app.baseUrl}/status`,
      accountId,
      attempts: 3,
      status: 500,
    });
    const everything = log.lines.join('\n');
    for (const secret of [tokens.accountToken, tokens.mainToken, 's3cr3t']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('retries a network error and gives up after the last one', async () => {
    const { delivery, events } = newDelivery(kind);
    const nobody = `http://127.0.0.1:${await freePort()}/status`;
    const delivered = await delivery.send({
      url: nobody,
      method: 'POST',
      params: {},
      accountId,
      retryDelaysSeconds: [0.2],
    });

    expect(delivered).toBe(false);
    expect(await events.waitFor('gaveUp')).toMatchObject({ attempts: 2, error: 'ECONNREFUSED' });
  });

  it('does not retry after a success', async () => {
    const { delivery, events } = newDelivery(kind);
    app.replyWith(204);
    await delivery.send({
      url: `${app.baseUrl}/status`,
      method: 'POST',
      params: { Status: 'queued' },
      accountId,
      retryDelaysSeconds: [0.5],
    });

    await sleep(1500);
    expect(app.received).toHaveLength(1);
    expect(events.events.map((e) => e.kind)).toEqual(['delivered']);
  });

  it('retries when the signing keys cannot be looked up', async () => {
    const { delivery, events, keys } = newDelivery(kind);
    const keysFor = keys.keysFor.bind(keys);
    let lookups = 0;
    keys.keysFor = async (id) => {
      if (++lookups === 1) throw new Error('state store unreachable');
      return keysFor(id);
    };
    const delivered = await delivery.send({
      url: `${app.baseUrl}/status`,
      method: 'POST',
      params: { Status: 'sent' },
      accountId,
      retryDelaysSeconds: [0.2],
    });

    expect(delivered).toBe(false);
    expect(events.of('retry')[0]?.error).toBe('signing keys unavailable: state store unreachable');
    const [received] = await app.waitForRequests(1);
    expectValidSignatures(received!, tokens);
    expect(await events.waitFor('delivered')).toMatchObject({ attempts: 2 });
  });

  it('sends nothing and keeps no retry when sendSigned cannot read the signing keys', async () => {
    const { delivery, events, keys } = newDelivery(kind);
    const keysFor = keys.keysFor.bind(keys);
    let lookups = 0;
    keys.keysFor = async (id) => {
      if (++lookups === 1) throw new Error('state store unreachable');
      return keysFor(id);
    };
    const request = {
      url: `${app.baseUrl}/hangup`,
      method: 'POST' as const,
      params: { Event: 'Hangup' },
      accountId,
      retryDelaysSeconds: [0.2],
    };

    expect(await delivery.sendSigned(request)).toBe('unsigned');
    await sleep(600);
    expect(app.received).toHaveLength(0);
    expect(events.events).toEqual([]);
    expect(await delivery.sendSigned(request)).toBe('delivered');
    const [received] = await app.waitForRequests(1);
    expectValidSignatures(received!, tokens);
    await sleep(400);
    expect(app.received).toHaveLength(1);
  });

  it('sends credentials in the URL as Basic auth, outside the signed URL', async () => {
    const { delivery } = newDelivery(kind);
    const withCredentials = app.baseUrl.replace('http://', 'http://hook:p%40ss@');
    expect(
      await delivery.send({ url: `${withCredentials}/cb`, method: 'GET', params: {}, accountId }),
    ).toBe(true);

    const [received] = await app.waitForRequests(1);
    const basic = Buffer.from('hook:p@ss').toString('base64');
    expect(received!.headers.authorization).toBe(`Basic ${basic}`);
    expectValidSignatures(received!, tokens);
  });

  it('drops the callback of an account that is gone, before or between attempts', async () => {
    const { delivery, events, keys } = newDelivery(kind);
    const unknown = await delivery.send({
      url: `${app.baseUrl}/status`,
      method: 'POST',
      params: {},
      accountId: newAuthId('SA'),
    });
    expect(unknown).toBe(false);
    expect(events.of('dropped')).toHaveLength(1);

    app.replyWith(500);
    await delivery.send({
      url: `${app.baseUrl}/status`,
      method: 'POST',
      params: {},
      accountId,
      retryDelaysSeconds: [0.5, 0.5],
    });
    keys.accounts.delete(accountId);
    expect(await events.waitFor('dropped', 2)).toMatchObject({ attempts: 1 });
    expect(app.received).toHaveLength(1);
    expect(events.of('gaveUp')).toHaveLength(0);
  });
});

describe('callback retries on Redis', () => {
  it('delivers a retry scheduled before the gateway stopped, from a new instance', async () => {
    const before = newDelivery('bullmq');
    app.replyWith(500);
    const delivered = await before.delivery.send({
      url: `${app.baseUrl}/status?node=1`,
      method: 'POST',
      params: { MessageUUID: 'm-restart', Status: 'delivered' },
      accountId,
      retryDelaysSeconds: [2],
    });
    expect(delivered).toBe(false);
    expect(before.events.of('retry')).toHaveLength(1);

    // The gateway stops before the retry is due.
    await before.delivery.close();
    expect(app.received).toHaveLength(1);

    const after = newDelivery('bullmq');
    const [, retry] = await app.waitForRequests(2);
    expect(retry!.method).toBe('POST');
    expect(Object.fromEntries(new URLSearchParams(retry!.body))).toEqual({
      MessageUUID: 'm-restart',
      Status: 'delivered',
    });
    expectValidSignatures(retry!, tokens);
    expect(await after.events.waitFor('delivered')).toMatchObject({ attempts: 2, status: 200 });
    expect(before.events.of('delivered')).toHaveLength(0);
  });

  it('keeps no auth token in Redis, and nothing once the job is done', async () => {
    const { delivery, events } = newDelivery('bullmq');
    app.replyWith(500);
    await delivery.send({
      url: `${app.baseUrl}/status`,
      method: 'POST',
      params: { MessageUUID: 'm-stored' },
      accountId,
      retryDelaysSeconds: [60],
    });
    expect(events.of('retry')).toHaveLength(1);

    const stored = await dumpRedis(redis.url);
    expect(stored).toContain('m-stored');
    expect(stored).toContain(accountId);
    expect(stored).not.toContain(tokens.accountToken);
    expect(stored).not.toContain(tokens.mainToken);
  });

  it('removes a delivered job from Redis', async () => {
    const { delivery, events } = newDelivery('bullmq');
    app.replyWith(500);
    await delivery.send({
      url: `${app.baseUrl}/status`,
      method: 'GET',
      params: { MessageUUID: 'm-done' },
      accountId,
      retryDelaysSeconds: [0.5],
    });
    await events.waitFor('delivered');
    // BullMQ removes the job just after the handler resolves.
    await sleep(300);
    expect(await dumpRedis(redis.url)).not.toContain('m-done');
  });
});

describe('callback retries with Redis unreachable', () => {
  it('gives up on a retry it cannot store, and still closes', async () => {
    const keys = new AccountKeys();
    keys.accounts.set(accountId, tokens);
    const events = new DeliveryEvents();
    const errors: Error[] = [];
    const queue = new BullMqRetryQueue<CallbackJob>({
      redisUrl: `redis://127.0.0.1:${await freePort()}`,
      scheduleTimeoutMs: 500,
      onError: (error) => errors.push(error),
    });
    const delivery = new CallbackDelivery({
      keys,
      queue,
      delegate: events,
      log: new RecordedLog(),
    });
    app.replyWith(500);

    const delivered = await delivery.send({
      url: `${app.baseUrl}/status`,
      method: 'POST',
      params: {},
      accountId,
      retryDelaysSeconds: [1],
    });

    expect(delivered).toBe(false);
    expect(events.of('gaveUp')[0]?.error).toMatch(/could not schedule a retry/);
    expect(errors.length).toBeGreaterThan(0);
    await delivery.close();
  });
});

/** Every key and value in Redis as text, read raw with a plain client. */
async function dumpRedis(url: string): Promise<string> {
  const client = new Redis(url);
  const read = async (key: string): Promise<unknown> => {
    const type = await client.type(key);
    switch (type) {
      case 'string':
        return client.get(key);
      case 'hash':
        return client.hgetall(key);
      case 'list':
        return client.lrange(key, 0, -1);
      case 'set':
        return client.smembers(key);
      case 'zset':
        return client.zrange(key, '0', '-1', 'WITHSCORES');
      case 'stream':
        return client.xrange(key, '-', '+');
      default:
        return `(${type})`;
    }
  };
  try {
    const out: string[] = [];
    for (const key of await client.keys('*')) out.push(`${key} ${JSON.stringify(await read(key))}`);
    return out.join('\n');
  } finally {
    client.disconnect();
  }
}
