import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer, connect, type Server, type Socket as TcpSocket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startWireCapture, type WireCapture } from '../../../bench/calls/wire-capture.js';
import { bound } from '../../support/lossy-udp-relay.js';
import { until } from '../../support/wait.js';

/** tcpdump is installed and this process may capture (root; CI runs as root). */
function canCapture(): boolean {
  try {
    execFileSync('tcpdump', ['--version'], { stdio: 'ignore' });
    return process.getuid?.() === 0;
  } catch {
    return false;
  }
}

const post = (n: number) => {
  const body = JSON.stringify({ to: 'sip:x@127.0.0.1', sip_headers: `bench=${n}` });
  return `POST /v1/Account/MA/Call/ HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
};
const invite = (n: number) =>
  `INVITE sip:bench@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5060\r\nX-PH-bench: ${n}\r\nContent-Length: 0\r\n\r\n`;

describe.skipIf(!canCapture())('post-dial delay on the wire', () => {
  let capture: WireCapture | null = null;
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    await capture?.stop();
    capture = null;
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('times each call from its POST to its first INVITE, by the kernel clock', async () => {
    const api: Server = createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => api.close(resolve)));
    const other: Server = createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => other.close(resolve)));
    const tap = await bound(createSocket('udp4'));
    closers.push(() => tap.close());
    const sender = await bound(createSocket('udp4'));
    closers.push(() => sender.close());
    const apiPort = (api.address() as { port: number }).port;
    const tapPort = tap.address().port;

    const started = await startWireCapture({ api: apiPort, tap: tapPort });
    if (!started.ok) throw new Error(started.reason);
    capture = started.capture;
    const client: TcpSocket = connect(apiPort, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    closers.push(() => client.destroy());
    const toOther: TcpSocket = connect((other.address() as { port: number }).port, '127.0.0.1');
    await new Promise((resolve) => toOther.once('connect', resolve));
    closers.push(() => toOther.destroy());

    // A POST to another server (the application's callbacks) is not a call being placed.
    toOther.write(post(2));
    await sleep(150);
    client.write(post(1));
    await sleep(40);
    sender.send(invite(1), tapPort, '127.0.0.1');
    client.write(post(2));
    await sleep(5);
    sender.send(invite(2), tapPort, '127.0.0.1');
    await sleep(100);
    // A retransmission is not when the call went out; an INVITE with no POST is not a call.
    sender.send(invite(1), tapPort, '127.0.0.1');
    sender.send(invite(3), tapPort, '127.0.0.1');

    let delays = new Map<number, number>();
    await until(() => {
      delays = capture!.postDialDelays();
      return delays.size === 2;
    });
    await sleep(100);
    delays = capture.postDialDelays();
    expect([...delays.keys()].sort()).toEqual([1, 2]);
    expect(delays.get(1)).toBeGreaterThanOrEqual(39);
    expect(delays.get(1)).toBeLessThan(140);
    expect(delays.get(2)).toBeGreaterThanOrEqual(4);
    expect(delays.get(2)).toBeLessThan(100);
    expect((await capture.stop()).droppedPackets).toBe(0);
    capture = null;
  });
});
