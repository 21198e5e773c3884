import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Flow } from '../../../src/sip/transport/flow.js';
import { TcpTransport } from '../../../src/sip/transport/tcp-transport.js';

const OPTIONS = (n: number) =>
  `OPTIONS sip:gw SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1;branch=z9hG4bK${n}\r\nContent-Length: 0\r\n\r\n`;

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('TcpTransport', () => {
  let transport: TcpTransport | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await transport?.close();
  });
  const dial = async (port: number) => {
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    await new Promise((r) => socket.once('connect', r));
    return socket;
  };

  it('frames messages split and merged across segments, answers on the same connection', async () => {
    const got: [string, Flow][] = [];
    transport = await TcpTransport.listen('127.0.0.1', 0, {
      onMessage: (d, f) => got.push([d.toString(), f]),
    });
    const client = await dial(transport.local.port);
    const received: string[] = [];
    client.on('data', (d) => received.push(d.toString()));
    const both = OPTIONS(1) + OPTIONS(2);
    client.write(both.slice(0, 30));
    await new Promise((r) => setTimeout(r, 20));
    client.write(both.slice(30));
    await until(() => got.length === 2);
    expect(got.map(([d]) => d)).toEqual([OPTIONS(1), OPTIONS(2)]);
    const flow = got[0]![1];
    expect(flow.protocol).toBe('TCP');
    expect(flow.remote.port).toBe(client.localPort);
    expect(got[1]![1].connectionId).toBe(flow.connectionId);
    await transport.send(Buffer.from('SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n'), {
      connectionId: flow.connectionId!,
    });
    await until(() => received.length > 0);
    expect(received.join('')).toBe('SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n');
  });

  it('answers a CRLF ping with a pong (RFC 5626) and keeps the connection', async () => {
    transport = await TcpTransport.listen('127.0.0.1', 0, { onMessage: () => {} });
    const client = await dial(transport.local.port);
    const received: string[] = [];
    client.on('data', (d) => received.push(d.toString()));
    client.write('\r\n\r\n');
    await until(() => received.length > 0);
    expect(received.join('')).toBe('\r\n');
    expect(transport.openConnections).toBe(1);
  });

  it('closes a connection whose stream cannot be framed, and one left idle', async () => {
    const errors: string[] = [];
    transport = await TcpTransport.listen(
      '127.0.0.1',
      0,
      { onMessage: () => {}, onError: (e) => errors.push(e.message) },
      { idleMs: 200 },
    );
    const bad = await dial(transport.local.port);
    const closed = new Promise((r) => bad.once('close', r));
    bad.write('OPTIONS sip:gw SIP/2.0\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\r\n\r\n');
    await closed;
    expect(errors[0]).toMatch(/Missing Content-Length/);

    const idle = await dial(transport.local.port);
    const idleClosed = new Promise((r) => idle.once('close', r));
    await until(() => transport!.openConnections === 1);
    await idleClosed;
    await until(() => transport!.openConnections === 0);
    expect(transport.openConnections).toBe(0);
  });

  it('reuses one outbound connection per remote address', async () => {
    const got: Flow[] = [];
    const peer = await TcpTransport.listen('127.0.0.1', 0, { onMessage: (_d, f) => got.push(f) });
    transport = await TcpTransport.listen('127.0.0.1', 0, { onMessage: () => {} });
    try {
      await transport.send(Buffer.from(OPTIONS(1)), peer.local);
      await transport.send(Buffer.from(OPTIONS(2)), peer.local);
      await until(() => got.length === 2);
      expect(got[0]!.connectionId).toBe(got[1]!.connectionId);
      expect(transport.openConnections).toBe(1);
    } finally {
      await peer.close();
    }
  });
});
