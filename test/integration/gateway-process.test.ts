import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';

const basic = (id: string, token: string) =>
  `Basic ${Buffer.from(`${id}:${token}`).toString('base64')}`;

describe('the gateway process', () => {
  const started: GatewayProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const p of started.splice(0)) await p.stop();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** The credentials file a first start wrote, read from the path it printed. */
  const announced = (stdout: string) => {
    const match =
      /generated the main account (MA[A-Z0-9]{18}); its auth id and token are in (\S+) /.exec(
        stdout,
      );
    expect(match, stdout).not.toBeNull();
    const path = match![2]!;
    const text = readFileSync(path, 'utf8');
    const id = /^VOXGATE_AUTH_ID=(MA[A-Z0-9]{18})$/m.exec(text)?.[1];
    const token = /^VOXGATE_AUTH_TOKEN=([A-Za-z0-9]{40})$/m.exec(text)?.[1];
    expect(id).toBe(match![1]);
    expect(token).toBeDefined();
    return { path, id: id!, token: token! };
  };

  it('starts with no configuration, writes generated credentials to a private file, and keeps them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-data-'));
    dirs.push(dataDir);
    const first = await spawnGateway({ VOXGATE_DATA_DIR: dataDir });
    started.push(first);
    await first.healthy();
    const { path, id, token } = announced(first.stdout());
    expect(path).toBe(join(dataDir, 'main-account.env'));
    // Readable and writable by its owner only; nothing else left beside it.
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dataDir).filter((f) => f.includes('main-account'))).toEqual([
      'main-account.env',
    ]);

    const list = await fetch(`http://127.0.0.1:${first.port}/v1/Account/${id}/Endpoint/`, {
      headers: { authorization: basic(id, token) },
    });
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({
      meta: { limit: 20, offset: 0, total_count: 0, next: null, previous: null },
      objects: [],
    });
    // The token is in the file only: not on stdout (a container's log), not in any log line.
    expect(await first.stop()).toBe(0);
    expect(first.stdout()).not.toContain(token);
    expect(first.stderr()).not.toContain(token);
    expect(first.stdout()).not.toMatch(/auth token:/);

    const second = await spawnGateway({ VOXGATE_DATA_DIR: dataDir });
    started.push(second);
    await second.healthy();
    expect(second.stdout()).not.toContain('generated the main account');
    expect(second.stdout()).not.toContain(token);
    const again = await fetch(`http://127.0.0.1:${second.port}/v1/Account/${id}/`, {
      headers: { authorization: basic(id, token) },
    });
    expect(again.status).toBe(200);
    // The file stays as it was.
    expect(readFileSync(path, 'utf8')).toContain(`VOXGATE_AUTH_TOKEN=${token}\n`);
  });

  it('creates a missing data directory for the file', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'voxgate-data-'));
    dirs.push(parent);
    const dataDir = join(parent, 'nested', 'data');
    const gateway = await spawnGateway({ VOXGATE_DATA_DIR: dataDir });
    started.push(gateway);
    await gateway.healthy();
    const { path } = announced(gateway.stdout());
    expect(path).toBe(join(dataDir, 'main-account.env'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('without a data directory, writes the file to a private directory removed at shutdown', async () => {
    const gateway = await spawnGateway({ VOXGATE_DATA_DIR: '' });
    started.push(gateway);
    await gateway.healthy();
    const { path, id, token } = announced(gateway.stdout());
    expect(gateway.stdout()).toContain('there is no data directory');
    expect(path.startsWith(tmpdir())).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    const res = await fetch(`http://127.0.0.1:${gateway.port}/v1/Account/${id}/`, {
      headers: { authorization: basic(id, token) },
    });
    expect(res.status).toBe(200);
    expect(await gateway.stop()).toBe(0);
    expect(gateway.stdout()).not.toContain(token);
    expect(existsSync(dirname(path))).toBe(false);
  });

  it('writes no file and prints nothing of the sort when the variables give the account', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-data-'));
    dirs.push(dataDir);
    const id = 'MA' + 'Z9'.repeat(9);
    const token = 'T0ken'.repeat(8);
    const gateway = await spawnGateway({
      VOXGATE_DATA_DIR: dataDir,
      VOXGATE_AUTH_ID: id,
      VOXGATE_AUTH_TOKEN: token,
    });
    started.push(gateway);
    await gateway.healthy();
    expect(gateway.stdout()).not.toContain('generated the main account');
    expect(existsSync(join(dataDir, 'main-account.env'))).toBe(false);
    const res = await fetch(`http://127.0.0.1:${gateway.port}/v1/Account/${id}/`, {
      headers: { authorization: basic(id, token) },
    });
    expect(res.status).toBe(200);
  });

  it('stops the start, storing no account, when the file cannot be written', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-data-'));
    dirs.push(dataDir);
    // A directory where the file should go: the rename into place fails.
    mkdirSync(join(dataDir, 'main-account.env'));
    const failed = await spawnGateway({ VOXGATE_DATA_DIR: dataDir });
    started.push(failed);
    expect(await new Promise((resolve) => failed.child.once('exit', resolve))).toBe(1);
    expect(failed.stderr()).toContain(
      `could not write the generated main account's credentials to ${join(dataDir, 'main-account.env')}`,
    );
    expect(failed.stdout()).not.toContain('generated the main account');
    expect(readdirSync(dataDir).filter((f) => f.startsWith('.main-account'))).toEqual([]);

    // Nothing was stored: once the way is clear, the next start generates the account.
    rmSync(join(dataDir, 'main-account.env'), { recursive: true });
    const next = await spawnGateway({ VOXGATE_DATA_DIR: dataDir });
    started.push(next);
    await next.healthy();
    const { id, token } = announced(next.stdout());
    const res = await fetch(`http://127.0.0.1:${next.port}/v1/Account/${id}/`, {
      headers: { authorization: basic(id, token) },
    });
    expect(res.status).toBe(200);
  });

  it('refuses to start on a bad value, naming the variable and the rule', async () => {
    const bad = await spawnGateway({ VOXGATE_DATA_DIR: '', VOXGATE_RTP_PORTS: '20000' });
    started.push(bad);
    expect(await new Promise((resolve) => bad.child.once('exit', resolve))).toBe(2);
    expect(bad.stderr()).toContain(
      'VOXGATE_RTP_PORTS="20000" is invalid: must be two port numbers MIN-MAX',
    );
  });
});
