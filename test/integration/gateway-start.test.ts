import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { until } from '../support/wait.js';

/**
 * What an operator sees when the gateway starts, as `npm start` runs it: the listeners and the
 * configuration it started with, in log lines without a secret (gateway-start-failure.test.ts
 * holds the starts that fail).
 */

/** The JSON log lines of a process's stdout (the plain credentials notice left out). */
const logLines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** Healthy, and its start-up summary written (it follows the first 200 from /health). */
async function summaryWritten(gateway: GatewayProcess): Promise<void> {
  await gateway.healthy();
  await until(() => logLines(gateway.stdout()).some((l) => l.msg === 'started'));
}

const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describe('the start of a gateway process', () => {
  const started: GatewayProcess[] = [];
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const p of started.splice(0)) await p.stop();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'voxgate-start-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  it('logs each listener where it is bound, then what it started with, and no secret', async () => {
    const dir = dataDir();
    const gateway = await spawnGateway({
      VOXGATE_DATA_DIR: dir,
      VOXGATE_PUBLIC_HOST: 'gw.example.test',
      VOXGATE_RTP_PORTS: '31000-31999',
      VOXGATE_CARRIER_URI: 'sip:trunkuser:Carrier-Secret-1@127.0.0.1:5999',
      VOXGATE_SMPP_URL: 'smpp://sender:SmscSec2@127.0.0.1:9',
      VOXGATE_MMS_MM7_URL: 'http://vasp:Mmsc-Secret-3@127.0.0.1:9/mm7?vasp_id=v1&vas_id=s1',
    });
    started.push(gateway);
    await summaryWritten(gateway);
    const lines = logLines(gateway.stdout());
    const listening = lines.filter((l) => l.msg === 'listening');
    expect(listening.map((l) => [l.listener, l.protocol, l.setting])).toEqual([
      ['http', 'tcp', 'VOXGATE_HTTP_PORT'],
      ['sip-udp', 'udp', 'VOXGATE_SIP_PORT'],
      ['sip-tcp', 'tcp', 'VOXGATE_SIP_PORT'],
      ['sip-ws', 'tcp', 'VOXGATE_SIP_WS_PORT'],
    ]);
    for (const line of listening) expect(line).toMatchObject({ level: 30, address: '127.0.0.1' });
    const [http, udp, tcp, ws] = listening.map((l) => l.port as number);
    // The ports are those bound: VOXGATE_SIP_PORT and VOXGATE_SIP_WS_PORT were 0 (any).
    expect(http).toBe(gateway.port);
    expect(udp).toBe(tcp);
    expect(udp).toBeGreaterThan(0);
    expect(await connects(tcp!)).toBe(true);
    expect(await connects(ws!)).toBe(true);

    const summary = lines.filter((l) => l.msg === 'started');
    expect(summary).toHaveLength(1);
    const credentials = join(dir, 'main-account.env');
    const id = /^VOXGATE_AUTH_ID=(\S+)$/m.exec(readFileSync(credentials, 'utf8'))![1]!;
    const token = /^VOXGATE_AUTH_TOKEN=(\S+)$/m.exec(readFileSync(credentials, 'utf8'))![1]!;
    expect(summary[0]).toMatchObject({
      level: 30,
      publicHost: 'gw.example.test',
      rtpPorts: '31000-31999',
      rtpHost: '127.0.0.1',
      store: { kind: 'embedded', path: join(dir, 'state.log'), persistent: true },
      carriers: [
        {
          name: 'default',
          gateways: ['sip:127.0.0.1:5999'],
          prefixes: [''],
          username: 'trunkuser',
        },
      ],
      smsc: [{ url: 'smpp://127.0.0.1:9', prefixes: [] }],
      mmsc: 'http://127.0.0.1:9/mm7',
      chatApp: 'https://graph.facebook.com/v21.0',
      mainAccount: id,
      credentials,
    });
    // Every line is JSON, the notice of the generated account among them.
    expect(
      gateway
        .stdout()
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('{')),
    ).toEqual([]);
    const notice = lines.find((l) => String(l.msg).startsWith('generated the main account MA'));
    expect(notice?.credentials).toMatch(/main-account\.env$/);
    expect(await gateway.stop()).toBe(0);
    const everything = gateway.stdout() + gateway.stderr();
    for (const secret of ['Carrier-Secret-1', 'SmscSec2', 'Mmsc-Secret-3', token])
      expect(everything).not.toContain(secret);
  });

  it('names the Redis store without its password, and how Redis persists', async () => {
    const redis: RedisServer = await startRedis({ persistent: true });
    cleanups.push(() => redis.stop());
    const admin = new Redis(redis.url);
    await admin.call('CONFIG', 'SET', 'requirepass', 'Redis-Secret-4');
    admin.disconnect();
    const gateway = await spawnGateway({
      VOXGATE_DATA_DIR: '',
      VOXGATE_REDIS_URL: `redis://:Redis-Secret-4@127.0.0.1:${redis.port}/0`,
    });
    started.push(gateway);
    await summaryWritten(gateway);
    const summary = logLines(gateway.stdout()).find((l) => l.msg === 'started');
    expect(summary?.store).toEqual({
      kind: 'redis',
      url: `redis://:***@127.0.0.1:${redis.port}/0`,
      persistence: 'aof (appendfsync always)',
    });
    expect(await gateway.stop()).toBe(0);
    expect(gateway.stdout() + gateway.stderr()).not.toContain('Redis-Secret-4');
    // Redis fsyncs every write of the start: on a disk the other test file keeps busy, that
    // took longer than 20 s once.
  }, 60_000);

  it('writes readable lines with VOXGATE_LOG_FORMAT=pretty', async () => {
    const gateway = await spawnGateway({ VOXGATE_DATA_DIR: '', VOXGATE_LOG_FORMAT: 'pretty' });
    started.push(gateway);
    await gateway.healthy();
    await until(() => /\] INFO: started \{/.test(gateway.stdout()));
    const out = gateway.stdout();
    expect(out.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
    // One line per entry: time, level and message, then its fields.
    expect(out).toMatch(
      new RegExp(
        `^\\[[\\d-]+ [\\d:.]+\\] INFO: listening \\{"listener":"http","protocol":"tcp",` +
          `"address":"127.0.0.1","port":${gateway.port},"setting":"VOXGATE_HTTP_PORT"\\}$`,
        'm',
      ),
    );
    expect(out).toMatch(/^\[[\d-]+ [\d:.]+\] INFO: started \{"node":/m);
  });
});
