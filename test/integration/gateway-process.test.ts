import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('starts with no configuration, prints generated credentials once, and keeps them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-data-'));
    dirs.push(dataDir);
    const first = await spawnGateway({ VOXGATE_DATA_DIR: dataDir });
    started.push(first);
    await first.healthy();
    const id = /auth id:\s+(MA[A-Z0-9]{18})/.exec(first.stdout())?.[1];
    const token = /auth token:\s+([A-Za-z0-9]{40})/.exec(first.stdout())?.[1];
    expect(id).toBeDefined();
    expect(token).toBeDefined();

    const list = await fetch(`http://127.0.0.1:${first.port}/v1/Account/${id}/Endpoint/`, {
      headers: { authorization: basic(id!, token!) },
    });
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({
      meta: { limit: 20, offset: 0, total_count: 0, next: null, previous: null },
      objects: [],
    });
    // The token appears once, in the announcement, and in no log line.
    expect(first.stdout().split(token!).length - 1).toBe(1);
    expect(await first.stop()).toBe(0);

    const second = await spawnGateway({ VOXGATE_DATA_DIR: dataDir });
    started.push(second);
    await second.healthy();
    expect(second.stdout()).not.toContain('auth token');
    const again = await fetch(`http://127.0.0.1:${second.port}/v1/Account/${id}/`, {
      headers: { authorization: basic(id!, token!) },
    });
    expect(again.status).toBe(200);
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
