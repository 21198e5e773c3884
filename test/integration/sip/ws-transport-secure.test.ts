import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Flow } from '../../../src/sip/transport/flow.js';
import { WsTransport, type WsHandshake } from '../../../src/sip/transport/ws-transport.js';
import { makeTestCertificate, type TestCertificate } from '../../support/tls-certificate.js';

const OPTIONS =
  'OPTIONS sip:gw SIP/2.0\r\nVia: SIP/2.0/WSS h.invalid;branch=z9hG4bK1\r\nContent-Length: 0\r\n\r\n';
const OK = 'SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n';

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('WsTransport over TLS (WSS)', () => {
  let certificate: TestCertificate;
  let transport: WsTransport;
  const messages: [string, Flow][] = [];
  const handshakes: WsHandshake[] = [];
  const closed: Flow[] = [];
  beforeAll(async () => {
    certificate = await makeTestCertificate();
    const { cert, key } = certificate;
    transport = await WsTransport.listen(
      '127.0.0.1',
      0,
      {
        onMessage: (d, f) => messages.push([d.toString(), f]),
        onConnection: (_f, h) => handshakes.push(h),
        onClose: (f) => closed.push(f),
      },
      { tls: { cert, key } },
    );
  });
  afterAll(async () => {
    await transport.close();
    await certificate.remove();
  });

  it('exchanges SIP with a client that trusts the certificate', async () => {
    const client = new WebSocket(`wss://localhost:${transport.local.port}`, ['sip'], {
      ca: certificate.cert,
      headers: { Authorization: 'Bearer secure.token' },
    });
    const received: string[] = [];
    client.on('message', (d: Buffer) => received.push(d.toString()));
    await new Promise((r) => client.once('open', r));
    expect(transport.protocol).toBe('WSS');
    client.send('\r\n\r\n');
    client.send(OPTIONS);
    await until(() => messages.length === 1);
    const [data, flow] = messages[0]!;
    expect(data).toBe(OPTIONS);
    expect(flow.protocol).toBe('WSS');
    expect(flow.connectionId).toMatch(/^wss-/);
    expect(handshakes[0]!.headers.authorization).toBe('Bearer secure.token');
    await transport.send(Buffer.from(OK), { connectionId: flow.connectionId! });
    await until(() => received.length === 2);
    expect(received).toEqual(['\r\n', OK]);
    client.close();
    await until(() => closed.length === 1);
    expect(closed[0]!.connectionId).toBe(flow.connectionId);
  });

  it('does not upgrade a client that rejects the certificate', async () => {
    const client = new WebSocket(`wss://localhost:${transport.local.port}`, ['sip']);
    const failure = await new Promise<Error>((r) => client.once('error', r));
    expect(failure.message).toMatch(/self-signed certificate/);
    expect(transport.openConnections).toBe(0);
  });
});
