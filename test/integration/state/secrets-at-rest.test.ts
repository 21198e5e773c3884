import { createHmac, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ha1, md5Hex } from '../../../src/core/digest.js';
import type { State } from '../../../src/state/state.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';
import { startGateway, type Credentials, type TestGateway } from '../../support/gateway.js';
import { startRedis, TEST_SECRET_KEY, type RedisServer } from '../../support/redis-server.js';
import { runSipp, startSippUas, type SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * Secrets at rest: a gateway on a real redis-server and one on the embedded store with a data
 * directory store every kind of secret there is; then every raw Redis value and the raw bytes
 * of state.log are searched for each secret in clear (and in base64), and each secret is shown
 * still to do its work: Basic auth, signed callbacks, an endpoint's REGISTER, a trunk's digest
 * answer to a PBX, the chat-app webhook checks; after a restart on the same store too, and
 * from records an older version wrote in clear.
 */

const URI_PASSWORD = 'Carrier-Pass1'; // what fixtures/sipp/carrier-auth.xml accepts
const ENDPOINT_PASSWORD = 'Endpoint-Secret-42';
const WABA = '104729374110042';

interface Stored {
  sub: Credentials;
  endpoint: { id: string; username: string };
  uriUuid: string;
  chatApp: { accessToken: string; appSecret: string; verifyToken: string };
}

let nextNumber = 14155557100;

/** Creates one of every resource that holds a secret. */
async function storeSecrets(gw: TestGateway): Promise<Stored> {
  const account = `/v1/Account/${gw.main.id}`;
  const sub = await gw.subaccount('secrets');
  const endpoint = await gw.request('POST', `${account}/Endpoint/`, {
    json: { username: 'vault', password: ENDPOINT_PASSWORD, alias: 'vault' },
  });
  expect(endpoint.status).toBe(201);
  const uri = await gw.request('POST', `${account}/SipTrunk/URI/`, {
    json: {
      uri: '127.0.0.1:5999',
      authentication_needed: true,
      username: 'carrieruser',
      password: URI_PASSWORD,
    },
  });
  expect(uri.status).toBe(201);
  const chatApp = {
    accessToken: `EAAG${randomBytes(24).toString('hex')}`,
    appSecret: randomBytes(16).toString('hex'),
    verifyToken: `verify-${randomBytes(12).toString('hex')}`,
  };
  const created = await gw.request('POST', `${account}/ChatApp/BusinessAccount/`, {
    json: {
      biz_account_id: WABA,
      access_token: chatApp.accessToken,
      app_secret: chatApp.appSecret,
      verify_token: chatApp.verifyToken,
    },
  });
  expect(created.status, created.text).toBe(201);
  return {
    sub,
    endpoint: { id: endpoint.body.endpoint_id, username: endpoint.body.username },
    uriUuid: uri.body.uri_uuid,
    chatApp,
  };
}

/** Every value that must not be found in the store in clear. */
function secretsOf(gw: TestGateway, stored: Stored): Record<string, string> {
  const { username } = stored.endpoint;
  return {
    'main auth token': gw.main.token,
    'subaccount auth token': stored.sub.token,
    'endpoint password': ENDPOINT_PASSWORD,
    'endpoint password MD5': md5Hex(ENDPOINT_PASSWORD),
    'endpoint HA1 MD5': ha1('MD5', username, ENDPOINT_PASSWORD),
    'endpoint HA1 SHA-256': ha1('SHA-256', username, ENDPOINT_PASSWORD),
    'origination URI password': URI_PASSWORD,
    'chat-app access token': stored.chatApp.accessToken,
    'chat-app app secret': stored.chatApp.appSecret,
    'chat-app verify token': stored.chatApp.verifyToken,
  };
}

/** The names of the secrets found in `raw`, in clear or base64 (either alphabet). */
function foundIn(raw: string, secrets: Record<string, string>): string[] {
  return Object.entries(secrets)
    .filter(([, value]) =>
      [
        value,
        Buffer.from(value).toString('base64').replace(/=+$/, ''),
        Buffer.from(value).toString('base64url'),
      ].some((form) => raw.includes(form)),
    )
    .map(([name]) => name);
}

/** Every key and value in the Redis server, as text: strings, hashes, sets, sorted sets, lists. */
async function dumpRedis(url: string): Promise<string> {
  const redis = new Redis(url);
  try {
    const parts: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        parts.push(key);
        const type = await redis.type(key);
        if (type === 'string') parts.push((await redis.get(key)) ?? '');
        else if (type === 'hash') parts.push(...Object.entries(await redis.hgetall(key)).flat());
        else if (type === 'set') parts.push(...(await redis.smembers(key)));
        else if (type === 'zset') parts.push(...(await redis.zrange(key, '0', '-1', 'WITHSCORES')));
        else if (type === 'list') parts.push(...(await redis.lrange(key, 0, -1)));
        else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
        else parts.push(`(${type})`);
      }
    } while (cursor !== '0');
    return parts.join('\n');
  } finally {
    redis.disconnect();
  }
}

/** Basic auth with each account's token, and a callback signed with both tokens. */
async function expectTokensWork(gw: TestGateway, sub: Credentials): Promise<void> {
  const asSub = await gw.request('GET', `/v1/Account/${sub.id}/`, { as: sub });
  expect(asSub.status).toBe(200);
  const wrong = await gw.request('GET', `/v1/Account/${sub.id}/`, {
    // One character off (a token may itself end with x).
    as: { id: sub.id, token: `${sub.token.slice(0, -1)}${sub.token.endsWith('x') ? 'y' : 'x'}` },
  });
  expect(wrong.status).toBe(401);
  const shown = await gw.request('GET', `/v1/Account/${gw.main.id}/Subaccount/${sub.id}/`);
  expect(shown.body.auth_token).toBe(sub.token);

  const app = await ClientApp.start();
  try {
    const url = `${app.baseUrl}/status`;
    await gw.gateway.callbacks.send({
      url,
      method: 'POST',
      params: { Status: 'sealed' },
      accountId: sub.id,
    });
    const [callback] = await app.waitForRequests(1);
    expectValidSignatures(callback!, { accountToken: sub.token, mainToken: gw.main.token });
  } finally {
    await app.close();
  }
}

/** The chat-app webhook checks need the verify token and the app secret. */
async function expectChatAppSecretsWork(gw: TestGateway, stored: Stored): Promise<void> {
  const path = `/v1/ChatApp/Webhook/${WABA}/`;
  const check = await gw.gateway.app.inject({
    method: 'GET',
    url: `${path}?hub.mode=subscribe&hub.verify_token=${stored.chatApp.verifyToken}&hub.challenge=4242`,
  });
  expect(check.statusCode).toBe(200);
  expect(check.body).toBe('4242');
  const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
  const signature = createHmac('sha256', stored.chatApp.appSecret).update(body).digest('hex');
  const signed = await gw.gateway.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${signature}` },
    payload: body,
  });
  expect(signed.statusCode).toBe(200);
}

/** The endpoint registers with its password (SIPp answers the gateway's MD5 challenge). */
async function expectEndpointRegisters(gw: TestGateway, stored: Stored): Promise<void> {
  const { username } = stored.endpoint;
  const result = await runSipp({
    scenario: 'register-auth.xml',
    target: { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port },
    extraArgs: ['-s', username, '-au', username, '-ap', ENDPOINT_PASSWORD],
    calls: 1,
    timeoutMs: 20_000,
  });
  expect(result.errors).toEqual([]);
  expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 1 });
}

/** A call to a trunk number reaches a PBX that asks for the URI's credentials, and is answered. */
async function expectTrunkAuthenticates(gw: TestGateway, stored: Stored): Promise<void> {
  const account = `/v1/Account/${gw.main.id}`;
  let pbx: SippUas | null = await startSippUas({
    scenario: 'carrier-auth.xml',
    traceMessages: true,
  });
  try {
    const moved = await gw.request('POST', `${account}/SipTrunk/URI/${stored.uriUuid}/`, {
      json: { uri: `127.0.0.1:${pbx.port}` },
    });
    expect(moved.status, moved.text).toBe(200);
    const trunk = await gw.request('POST', `${account}/SipTrunk/Trunk/`, {
      json: { name: 'pbx', trunk_direction: 'inbound', primary_uri_uuid: stored.uriUuid },
    });
    expect(trunk.status).toBe(201);
    const number = String(nextNumber++);
    const added = await gw.request('POST', `${account}/Number/`, {
      json: { numbers: number, carrier: 'c', region: 'r', trunk_id: trunk.body.trunk_id },
    });
    expect(added.status).toBe(201);
    const caller = await runSipp({
      scenario: 'uac-invite.xml',
      target: { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port },
      calls: 1,
      extraArgs: ['-s', number, '-d', '500'],
      timeoutMs: 20_000,
    });
    expect(caller.successful).toBe(1);
    const seen = await pbx.stop();
    pbx = null;
    expect(seen.messages).toMatch(/^Authorization: Digest username="carrieruser"/m);
  } finally {
    await pbx?.stop();
  }
}

/** The stored documents of the records that hold secrets, as an older version wrote them. */
async function plaintextDocuments(
  state: State,
  tenant: string,
): Promise<{ kind: string; id: string; doc: object }[]> {
  return [
    ...(await state.accounts.all(tenant)).map(({ auth_token_digest: _digest, ...doc }) => ({
      kind: 'account',
      id: doc.auth_id,
      doc,
    })),
    ...(await state.endpoints.all(tenant)).map((doc) => ({
      kind: 'endpoint',
      id: doc.endpoint_id,
      doc,
    })),
    ...(await state.originationUris.all(tenant)).map((doc) => ({
      kind: 'origination_uri',
      id: doc.uri_uuid,
      doc,
    })),
    ...(await state.chatAppAccounts.all(tenant)).map((doc) => ({
      kind: 'chatapp_account',
      id: doc.biz_account_id,
      doc,
    })),
  ];
}

describe('secrets at rest on Redis', () => {
  let redis: RedisServer;
  let gw: TestGateway | null = null;
  let stored: Stored;
  let secrets: Record<string, string>;
  let main: Credentials;

  beforeAll(async () => {
    redis = await startRedis();
    gw = await startGateway({ redisUrl: redis.url, listen: true });
    main = gw.main;
    stored = await storeSecrets(gw);
    secrets = secretsOf(gw, stored);
  });

  afterAll(async () => {
    await gw?.close();
    await redis.stop();
  });

  it('keeps no secret in clear in any Redis key or value', async () => {
    const dump = await dumpRedis(redis.url);
    expect(dump).toContain(stored.sub.id); // the dump does see the records
    expect(dump).toContain('enc:v1:');
    expect(foundIn(dump, secrets)).toEqual([]);
    expect(foundIn(dump, { key: TEST_SECRET_KEY })).toEqual([]);
  });

  it('still authenticates, signs, registers, answers a trunk challenge and checks webhooks', async () => {
    await expectTokensWork(gw!, stored.sub);
    await expectChatAppSecretsWork(gw!, stored);
    await expectEndpointRegisters(gw!, stored);
    await expectTrunkAuthenticates(gw!, stored);
    // Nothing the work above wrote (bindings, calls, queued jobs) holds a secret either.
    expect(foundIn(await dumpRedis(redis.url), secrets)).toEqual([]);
  });

  it('works after a restart on the same Redis with the same key', async () => {
    await gw!.close();
    gw = await startGateway({ redisUrl: redis.url, listen: true });
    expect(gw.main).toEqual(main);
    await expectTokensWork(gw, stored.sub);
    await expectEndpointRegisters(gw, stored);
  });

  it('reads records an older version wrote in clear, then stores them encrypted', async () => {
    const docs = await plaintextDocuments(gw!.gateway.state, main.id);
    await gw!.close();
    gw = null;
    const raw = new Redis(redis.url);
    try {
      for (const { kind, id, doc } of docs) {
        await raw.set(`vg:{${main.id}}:d:${kind}:${id}`, JSON.stringify(doc));
      }
    } finally {
      raw.disconnect();
    }
    expect(foundIn(await dumpRedis(redis.url), secrets)).toContain('subaccount auth token');

    gw = await startGateway({ redisUrl: redis.url, listen: true });
    expect(gw.logs.join('\n')).toMatch(/encrypted the secrets an older version stored in clear/);
    expect(foundIn(await dumpRedis(redis.url), secrets)).toEqual([]);
    await expectTokensWork(gw, stored.sub);
    await expectChatAppSecretsWork(gw, stored);
    await expectEndpointRegisters(gw, stored);
  });
});

describe('secrets at rest on the embedded store', () => {
  let dataDir: string;
  let gw: TestGateway | null = null;
  let stored: Stored;
  let secrets: Record<string, string>;
  const start = () => startGateway({ listen: true, env: { VOXGATE_DATA_DIR: dataDir } });
  const logBytes = () => readFileSync(join(dataDir, 'state.log'), 'latin1');

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'voxgate-secrets-'));
    gw = await start();
    stored = await storeSecrets(gw);
    secrets = secretsOf(gw, stored);
    await gw.gateway.state.store.durable();
  });

  afterAll(async () => {
    await gw?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('generates a key file readable by its owner only, and keeps no secret in clear in state.log', async () => {
    const keyFile = join(dataDir, 'secret.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(gw!.logs.join('\n')).not.toContain(key);
    const log = logBytes();
    expect(log).toContain(stored.sub.id);
    expect(log).toContain('enc:v1:');
    expect(foundIn(log, secrets)).toEqual([]);
    expect(foundIn(log, { key })).toEqual([]);
  });

  it('still authenticates, signs, registers, answers a trunk challenge and checks webhooks', async () => {
    await expectTokensWork(gw!, stored.sub);
    await expectChatAppSecretsWork(gw!, stored);
    await expectEndpointRegisters(gw!, stored);
    await expectTrunkAuthenticates(gw!, stored);
    await gw!.gateway.state.store.durable();
    expect(foundIn(logBytes(), secrets)).toEqual([]);
  });

  it('works after a restart with the key from the data directory', async () => {
    const main = gw!.main;
    await gw!.close();
    gw = await start();
    expect(gw.main).toEqual(main);
    await expectTokensWork(gw, stored.sub);
    await expectEndpointRegisters(gw, stored);
  });

  it('reads records an older version wrote in clear, then rewrites the log without them', async () => {
    const docs = await plaintextDocuments(gw!.gateway.state, gw!.main.id);
    const tenant = gw!.main.id;
    await gw!.close();
    gw = null;
    // As an older version appended them: the document in clear, under its key.
    for (const { kind, id, doc } of docs) {
      const key = `${tenant}\u0000${kind}\u0000${id}`;
      appendFileSync(
        join(dataDir, 'state.log'),
        `["d",${JSON.stringify(key)},${JSON.stringify(doc)}]\n`,
      );
    }
    expect(foundIn(logBytes(), secrets)).toContain('origination URI password');

    gw = await start();
    expect(gw.logs.join('\n')).toMatch(/encrypted the secrets an older version stored in clear/);
    await gw.gateway.state.store.durable();
    expect(foundIn(logBytes(), secrets)).toEqual([]);
    await expectTokensWork(gw, stored.sub);
    await expectChatAppSecretsWork(gw, stored);
    await expectEndpointRegisters(gw, stored);
  });

  it('refuses to start with another key, saying which key is wrong', async () => {
    await gw!.close();
    gw = null;
    const keyFile = join(dataDir, 'secret.key');
    const key = readFileSync(keyFile, 'utf8');
    try {
      writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
      await expect(start()).rejects.toThrow(
        /could not be decrypted: the secret key \(VOXGATE_SECRET_KEY, or secret\.key in the data directory\) is not the one it was encrypted with/,
      );
    } finally {
      writeFileSync(keyFile, key, { mode: 0o600 });
    }
    gw = await start();
    await until(
      async () => (await gw!.request('GET', `/v1/Account/${gw!.main.id}/`)).status === 200,
    );
  });
});

describe('the secret key setting', () => {
  it('is required with Redis, and the gateway refuses to start without it', async () => {
    await expect(
      startGateway({ env: { VOXGATE_REDIS_URL: 'redis://127.0.0.1:1' } }),
    ).rejects.toThrow(
      /^VOXGATE_SECRET_KEY="" is invalid: must be set with VOXGATE_REDIS_URL: every node sharing Redis/,
    );
  });
});
