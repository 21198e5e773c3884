import { connect, type TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionListener } from '../../../src/sip/transport/connection-listener.js';
import type { Flow } from '../../../src/sip/transport/flow.js';
import { TlsTransport } from '../../../src/sip/transport/tls-transport.js';
import { makeTestCertificate, type TestCertificate } from '../../support/tls-certificate.js';

const OPTIONS = (n: number) =>
  `OPTIONS sip:gw SIP/2.0\r\nVia: SIP/2.0/TLS 127.0.0.1;branch=z9hG4bK${n}\r\nContent-Length: 5\r\n\r\nbody${n}`;
const OK = 'SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n';

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('TlsTransport', () => {
  let certificate: TestCertificate;
  let transport: TlsTransport | undefined;
  const sockets: TLSSocket[] = [];
  beforeAll(async () => {
    certificate = await makeTestCertificate();
  });
  afterAll(async () => {
    await certificate.remove();
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await transport?.close();
    transport = undefined;
  });
  const start = async (listener: ConnectionListener) => {
    const { cert, key } = certificate;
    transport = await TlsTransport.listen('127.0.0.1', 0, listener, { cert, key });
    return transport;
  };
  const dial = async (port: number) => {
    const socket = connect({ host: '127.0.0.1', port, ca: certificate.cert });
    sockets.push(socket);
    await new Promise((r) => socket.once('secureConnect', r));
    return socket;
  };

  it('frames messages written in small chunks and answers on the same connection', async () => {
    const got: [string, Flow][] = [];
    const { local } = await start({ onMessage: (d, f) => got.push([d.toString(), f]) });
    const client = await dial(local.port);
    const received: string[] = [];
    client.on('data', (d: Buffer) => received.push(d.toString()));
    // Two messages, each split and the second glued to the first, in 7-octet records.
    const both = OPTIONS(1) + OPTIONS(2);
    for (let i = 0; i < both.length; i += 7) {
      client.write(both.slice(i, i + 7));
      if (i % 49 === 0) await pause(2);
    }
    await until(() => got.length === 2);
    expect(got.map(([d]) => d)).toEqual([OPTIONS(1), OPTIONS(2)]);
    const flow = got[0]![1];
    expect(flow.protocol).toBe('TLS');
    expect(flow.connectionId).toMatch(/^tls-/);
    expect(flow.remote.port).toBe(client.localPort);
    expect(got[1]![1].connectionId).toBe(flow.connectionId);
    await transport!.send(Buffer.from(OK), { connectionId: flow.connectionId! });
    await until(() => received.length > 0);
    expect(received.join('')).toBe(OK);
  });

  it('answers a CRLF ping with a pong (RFC 5626) inside TLS', async () => {
    const { local } = await start({ onMessage: () => {} });
    const client = await dial(local.port);
    const received: string[] = [];
    client.on('data', (d: Buffer) => received.push(d.toString()));
    client.write('\r\n');
    await pause(20);
    client.write('\r\n');
    await until(() => received.join('') === '\r\n');
    expect(received.join('')).toBe('\r\n');
  });

  it('reports a connection that closed, and one cut for bad framing', async () => {
    const closed: Flow[] = [];
    const errors: string[] = [];
    const { local } = await start({
      onMessage: () => {},
      onClose: (f) => closed.push(f),
      onError: (e) => errors.push(e.message),
    });
    const client = await dial(local.port);
    const port = client.localPort;
    client.end();
    await until(() => closed.length === 1);
    expect(closed[0]).toMatchObject({ protocol: 'TLS', remote: { port } });

    const bad = await dial(local.port);
    bad.write('OPTIONS sip:gw SIP/2.0\r\nVia: SIP/2.0/TLS h;branch=z9hG4bK1\r\n\r\n');
    await until(() => closed.length === 2);
    expect(errors.join()).toMatch(/Missing Content-Length/);
    expect(transport!.openConnections).toBe(0);
  });

  it('dials a peer it trusts once and reuses the connection', async () => {
    const got: Flow[] = [];
    const { cert, key } = certificate;
    const peer = await TlsTransport.listen(
      '127.0.0.1',
      0,
      { onMessage: (_d, f) => got.push(f) },
      { cert, key },
    );
    transport = await TlsTransport.listen(
      '127.0.0.1',
      0,
      { onMessage: () => {} },
      { cert, key, ca: cert },
    );
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

  it('refuses to send to a peer whose certificate it does not trust', async () => {
    const errors: string[] = [];
    const peer = await start({ onMessage: () => {}, onError: (e) => errors.push(e.message) });
    const { cert, key } = certificate;
    const untrusting = await TlsTransport.listen(
      '127.0.0.1',
      0,
      { onMessage: () => {} },
      { cert, key },
    );
    try {
      await expect(untrusting.send(Buffer.from(OPTIONS(1)), peer.local)).rejects.toThrow(
        /self-signed certificate/,
      );
      expect(untrusting.openConnections).toBe(0);
      // The side that was refused sees the handshake fail, and only reports it.
      await until(() => errors.length > 0);
      expect(errors[0]).toMatch(/TLS handshake failed: /);
      expect(peer.openConnections).toBe(0);
    } finally {
      await untrusting.close();
    }
  });

  it('refuses a certificate and key that do not make a pair', async () => {
    const other = await makeTestCertificate();
    try {
      await expect(
        TlsTransport.listen(
          '127.0.0.1',
          0,
          { onMessage: () => {} },
          {
            cert: certificate.cert,
            key: other.key,
          },
        ),
      ).rejects.toThrow(/^Expected a PEM certificate and its private key for TLS: /);
    } finally {
      await other.remove();
    }
  });
});
