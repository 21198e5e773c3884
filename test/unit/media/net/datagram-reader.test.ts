import { execFileSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { workerScript } from '../../../../src/core/worker-script.js';
import { readThroughReader } from '../../../../src/media/net/datagram-reader.js';
import { until } from '../../../support/wait.js';

const sockets: Socket[] = [];

async function bound(type: 'udp4' | 'udp6' = 'udp4', host = '127.0.0.1'): Promise<Socket> {
  const socket = createSocket({ type });
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  return socket;
}

afterEach(async () => {
  await Promise.all(
    sockets
      .splice(0)
      .map((socket) => new Promise<void>((resolve) => socket.close(() => resolve()))),
  );
});

type Received = [string, number, string];

describe('readThroughReader', () => {
  it("hands each socket's datagrams, bytes and source, to its own handler instead of Node", async () => {
    const [a, b, sender] = [await bound(), await bound(), await bound()];
    const atA: Received[] = [];
    const atB: Received[] = [];
    const node: string[] = [];
    for (const socket of [a, b]) socket.on('message', (data) => node.push(data.toString()));
    const releaseA = readThroughReader(a, (d, port, addr) => atA.push([d.toString(), port, addr]));
    const releaseB = readThroughReader(b, (d, port, addr) => atB.push([d.toString(), port, addr]));
    expect(releaseA).toBeTypeOf('function');
    expect(releaseB).toBeTypeOf('function');
    // A burst, so that several datagrams of both sockets are read in one go, in order.
    for (let k = 0; k < 100; k++) {
      sender.send(`a${k}`, a.address().port, '127.0.0.1');
      sender.send(`b${k}`, b.address().port, '127.0.0.1');
    }
    await until(() => atA.length === 100 && atB.length === 100);
    const from = sender.address().port;
    expect(atA).toEqual(Array.from({ length: 100 }, (_, k) => [`a${k}`, from, '127.0.0.1']));
    expect(atB.map(([text]) => text)).toEqual(Array.from({ length: 100 }, (_, k) => `b${k}`));
    expect(node).toEqual([]);

    // Released: the socket's datagrams no longer reach the handler; the other's still do.
    releaseA!();
    sender.send('late', a.address().port, '127.0.0.1');
    sender.send('b-after', b.address().port, '127.0.0.1');
    await until(() => atB.length === 101);
    expect(atA).toHaveLength(100);
    releaseB!();
  });

  it('reads every ready socket in one turn, more than one epoll_wait returns at a time', async () => {
    const receivers = await Promise.all(Array.from({ length: 150 }, () => bound()));
    const got: number[] = [];
    let firstTurn: number | null = null;
    const releases = receivers.map((socket, i) =>
      readThroughReader(socket, () => {
        // Runs once the reader's call into JavaScript is over: what that one call handed on.
        if (got.length === 0) process.nextTick(() => (firstTurn = got.length));
        got.push(i);
      }),
    );
    // Sent by another process while this thread is held, so all 150 are waiting together.
    const ports = receivers.map((socket) => socket.address().port);
    execFileSync(process.execPath, [
      '-e',
      `const s = require('node:dgram').createSocket('udp4');
       const ports = ${JSON.stringify(ports)};
       let left = ports.length;
       for (const p of ports) s.send('x', p, '127.0.0.1', () => { if (--left === 0) s.close(); });`,
    ]);
    await until(() => got.length === 150);
    expect(firstTurn).toBe(150);
    expect(new Set(got).size).toBe(150);
    for (const release of releases) release!();
  });

  it('drops a datagram over 2,048 bytes and delivers the next', async () => {
    const [socket, sender] = [await bound(), await bound()];
    const got: number[] = [];
    const release = readThroughReader(socket, (data) => got.push(data.length));
    sender.send(Buffer.alloc(3000, 1), socket.address().port, '127.0.0.1');
    sender.send(Buffer.alloc(2048, 2), socket.address().port, '127.0.0.1');
    sender.send(Buffer.alloc(172, 3), socket.address().port, '127.0.0.1');
    await until(() => got.length === 2);
    expect(got).toEqual([2048, 172]);
    release!();
  });

  it('leaves an IPv6 socket to Node', async () => {
    const socket = await bound('udp6', '::1');
    expect(readThroughReader(socket, () => undefined)).toBeNull();
    const arrived = new Promise<string>((resolve) =>
      socket.once('message', (data) => resolve(data.toString())),
    );
    const sender = await bound('udp6', '::1');
    sender.send('six', socket.address().port, '::1');
    expect(await arrived).toBe('six');
  });

  it('lets a worker thread that reads through it end, terminated or on its own', async () => {
    const script = workerScript(new URL('./children/reading-thread.ts', import.meta.url));
    for (const how of ['terminate', 'on its own']) {
      const worker = new Worker(script);
      const first = await new Promise<string>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(first).toBe('reading');
      const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
      if (how === 'terminate') await worker.terminate();
      else worker.postMessage('close');
      // On its own: once its one socket is given back and closed, nothing keeps it alive.
      expect(await exited).toBeTypeOf('number');
    }
  });
});
