import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { until } from '../support/wait.js';

/**
 * A start that fails: a port another program holds is named by its setting, the process exits
 * 1 without a stack, and the credentials it handed out are what the next start uses.
 */
const basic = (id: string, token: string) =>
  `Basic ${Buffer.from(`${id}:${token}`).toString('base64')}`;

/** The JSON log lines of a process's stdout (the plain credentials notice left out). */
const logLines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const exitOf = (gateway: GatewayProcess) =>
  new Promise<number | null>((resolve) =>
    gateway.child.exitCode !== null
      ? resolve(gateway.child.exitCode)
      : gateway.child.once('exit', (code) => resolve(code)),
  );

const tcpHolder = (port: number) =>
  new Promise<Server>((resolve) => {
    const server = createServer();
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

const udpHolder = (port: number) =>
  new Promise<UdpSocket>((resolve) => {
    const socket = createSocket('udp4');
    socket.bind(port, '127.0.0.1', () => resolve(socket));
  });

describe('a gateway process whose start fails', () => {
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

  it('names the setting of a SIP port another program holds, exits 1 without a stack, and removes an in-memory account file', async () => {
    const sipPort = await freePort();
    const holder = await udpHolder(sipPort);
    cleanups.push(() => holder.close());
    const gateway = await spawnGateway({ VOXGATE_DATA_DIR: '', VOXGATE_SIP_PORT: String(sipPort) });
    started.push(gateway);
    expect(await exitOf(gateway)).toBe(1);
    expect(gateway.stderr()).toBe(
      `voxgate: failed to start: port ${sipPort} is in use (VOXGATE_SIP_PORT)\n`,
    );
    // The account lived in this process's memory only: the file naming it goes with it.
    const path = /are in (\S+) /.exec(gateway.stdout())?.[1];
    expect(path).toBeDefined();
    expect(existsSync(path!)).toBe(false);
  });

  it('adopts the credentials a failed first start wrote, storing the account they name again', async () => {
    const dir = dataDir();
    const httpPort = await freePort();
    const holder = await tcpHolder(httpPort);
    const first = await spawnGateway({
      VOXGATE_DATA_DIR: dir,
      VOXGATE_HTTP_PORT: String(httpPort),
    });
    started.push(first);
    expect(await exitOf(first)).toBe(1);
    expect(first.stderr()).toBe(
      `voxgate: failed to start: port ${httpPort} is in use (VOXGATE_HTTP_PORT)\n`,
    );
    await new Promise((resolve) => holder.close(resolve));
    const credentials = join(dir, 'main-account.env');
    const written = readFileSync(credentials, 'utf8');
    const id = /^VOXGATE_AUTH_ID=(MA[A-Z0-9]{18})$/m.exec(written)![1]!;
    const token = /^VOXGATE_AUTH_TOKEN=([A-Za-z0-9]{40})$/m.exec(written)![1]!;
    expect(first.stdout()).toContain(`generated the main account ${id}`);
    // The store loses what the failed start wrote (its log gone): the file is all there is.
    rmSync(join(dir, 'state.log'));

    const second = await spawnGateway({ VOXGATE_DATA_DIR: dir });
    started.push(second);
    await second.healthy();
    await until(() => logLines(second.stdout()).some((l) => l.msg === 'started'));
    expect(second.stdout()).not.toContain('generated the main account');
    expect(readFileSync(credentials, 'utf8')).toBe(written);
    const restored = logLines(second.stdout()).filter((l) => l.path === credentials);
    expect(restored).toEqual([
      expect.objectContaining({
        level: 30,
        authId: id,
        msg: expect.stringContaining('stored it from the file'),
      }),
    ]);
    expect(logLines(second.stdout()).find((l) => l.msg === 'started')).toMatchObject({
      mainAccount: id,
      credentials,
    });
    const res = await fetch(`http://127.0.0.1:${second.port}/v1/Account/${id}/`, {
      headers: { authorization: basic(id, token) },
    });
    expect(res.status).toBe(200);
    expect(second.stdout() + second.stderr()).not.toContain(token);
  });

  it('refuses to start on a credentials file it cannot read, leaving the file as it is', async () => {
    const dir = dataDir();
    const credentials = join(dir, 'main-account.env');
    writeFileSync(credentials, 'VOXGATE_AUTH_ID=MA123\n', { mode: 0o600 });
    const gateway = await spawnGateway({ VOXGATE_DATA_DIR: dir });
    started.push(gateway);
    expect(await exitOf(gateway)).toBe(1);
    expect(gateway.stderr()).toBe(
      `voxgate: failed to start: ${credentials} holds no VOXGATE_AUTH_ID and VOXGATE_AUTH_TOKEN ` +
        'lines as the gateway wrote them: restore it, or remove it to have a new main account ' +
        'generated\n',
    );
    expect(gateway.stdout()).not.toContain('generated the main account');
    expect(readFileSync(credentials, 'utf8')).toBe('VOXGATE_AUTH_ID=MA123\n');
  });
});
