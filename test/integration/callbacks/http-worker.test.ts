import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { httpExchange, stopHttpWorker } from '../../../src/callbacks/http-exchange.js';
import { httpWorkerMetrics } from '../../../src/callbacks/http-worker-metrics.js';
import { OutboundGuard } from '../../../src/core/outbound-guard.js';

const CHILD = fileURLToPath(new URL('./children/one-exchange.ts', import.meta.url));

const guard = new OutboundGuard({ policy: { profile: 'self-hosted', ownPorts: [] } });

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('the HTTP worker thread that makes the requests to client URLs', () => {
  it('fails the requests it had when it dies, with the reason, counts and logs the death, and the next request starts a new one', async () => {
    let arrived!: () => void;
    const received = new Promise<void>((resolve) => (arrived = resolve));
    const base = await listen((req, res) => {
      if (req.url === '/hold') return arrived(); // never answered
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`${req.method} ${req.url}`);
    });

    const registry = new Registry();
    const logged: unknown[] = [];
    const stopLog = httpWorkerMetrics(registry, {
      error: (fields, message) => logged.push({ ...fields, message }),
    });
    const metric = async (name: string) =>
      (await registry.getSingleMetric(name)!.get()).values[0]!.value;
    const crashesBefore = await metric('voxgate_http_worker_crashes_total');

    const held = httpExchange(
      { url: new URL(`${base}/hold`), method: 'GET', headers: {} },
      { timeoutMs: 10_000, guard },
    );
    await received;
    expect(await metric('voxgate_http_worker_requests')).toBe(1);
    await stopHttpWorker();
    expect(await held).toEqual({ ok: false, error: 'the HTTP worker exited with code 1' });
    expect(await metric('voxgate_http_worker_crashes_total')).toBe(crashesBefore + 1);
    expect(await metric('voxgate_http_worker_requests')).toBe(0);
    expect(logged).toEqual([
      {
        reason: 'the HTTP worker exited with code 1',
        failedRequests: 1,
        message: 'HTTP worker crashed',
      },
    ]);
    stopLog();

    const next = await httpExchange(
      { url: new URL(`${base}/next?a=1`), method: 'POST', headers: {}, body: Buffer.from('x=1') },
      { timeoutMs: 5000, guard, readBody: { maxBytes: 100 } },
    );
    expect(next.ok && next.body?.toString()).toBe('POST /next?a=1');
  });

  it('fails a request undici refuses (a header it cannot send) and goes on with the others', async () => {
    const base = await listen((req, res) => res.writeHead(200).end(`${req.url}`));
    const refused = await httpExchange(
      { url: new URL(`${base}/bad`), method: 'GET', headers: { 'X-Bad': 'a\r\nb' } },
      { timeoutMs: 5000, guard },
    );
    expect(refused).toMatchObject({ ok: false, error: expect.stringMatching(/header/i) });
    const fine = await httpExchange(
      { url: new URL(`${base}/fine`), method: 'GET', headers: {} },
      { timeoutMs: 5000, guard, readBody: { maxBytes: 100 } },
    );
    expect(fine.ok && fine.body?.toString()).toBe('/fine');
  });

  it('closes the kept-open connections of a guard that is gone', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const base = await listen((req, res) => res.writeHead(200).end('kept'));
    server!.keepAliveTimeout = 60_000; // the client may keep it for a minute
    let closed = false;
    server!.on('connection', (socket) => socket.on('close', () => (closed = true)));

    await (async () => {
      const passing = new OutboundGuard({ policy: { profile: 'self-hosted', ownPorts: [] } });
      const result = await httpExchange(
        { url: new URL(`${base}/once`), method: 'GET', headers: {} },
        { timeoutMs: 5000, guard: passing },
      );
      expect(result).toMatchObject({ ok: true, status: 200 });
    })();
    expect(closed).toBe(false);
    for (let i = 0; i < 40 && !closed; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(closed).toBe(true);
  });

  it('does not keep an idle process alive', async () => {
    const base = await listen((req, res) => res.writeHead(200).end('hello'));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', CHILD, `${base}/idle`],
      { timeout: 20_000 },
    );
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, status: 200, body: 'hello' });
  });
});
