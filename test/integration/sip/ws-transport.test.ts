import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Flow } from '../../../src/sip/transport/flow.js';
import {
  WsTransport,
  type WsHandshake,
  type WsTransportListener,
  type WsTransportOptions,
} from '../../../src/sip/transport/ws-transport.js';

const REGISTER = [
  'REGISTER sip:gw SIP/2.0',
  'Via: SIP/2.0/WS df7jal23ls0d.invalid;branch=z9hG4bK1;rport',
  'From: <sip:alice@gw>;tag=a1',
  'To: <sip:alice@gw>',
  'Call-ID: c1',
  'CSeq: 1 REGISTER',
  'Contact: <sip:alice@df7jal23ls0d.invalid;transport=ws>',
  'Content-Length: 0',
  '',
  '',
].join('\r\n');
const OK = 'SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n';

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** Everything the transport told its listener. */
class Recorder implements WsTransportListener {
  messages: [Buffer, Flow][] = [];
  connections: [Flow, WsHandshake][] = [];
  closed: Flow[] = [];
  errors: string[] = [];
  onMessage(data: Buffer, flow: Flow): void {
    this.messages.push([data, flow]);
  }
  onConnection(flow: Flow, handshake: WsHandshake): void {
    this.connections.push([flow, handshake]);
  }
  onClose(flow: Flow): void {
    this.closed.push(flow);
  }
  onError(error: Error): void {
    this.errors.push(error.message);
  }
}

describe('WsTransport (RFC 7118)', () => {
  let transport: WsTransport | undefined;
  const clients: WebSocket[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.terminate();
    await transport?.close();
    transport = undefined;
  });
  const start = async (options: WsTransportOptions = {}) => {
    const recorder = new Recorder();
    transport = await WsTransport.listen('127.0.0.1', 0, recorder, options);
    return recorder;
  };
  const dial = (protocols: string[], options: ConstructorParameters<typeof WebSocket>[2] = {}) => {
    const client = new WebSocket(
      `ws://127.0.0.1:${transport!.local.port}/sip?x=1`,
      protocols,
      options,
    );
    clients.push(client);
    const received: Buffer[] = [];
    client.on('message', (data: Buffer) => received.push(data));
    client.on('error', () => {});
    const opened = new Promise<void>((resolve, reject) => {
      client.once('open', () => resolve());
      client.once('unexpected-response', (_req, res) =>
        reject(new Error(`HTTP ${res.statusCode}`)),
      );
    });
    return { client, received, opened };
  };

  it('takes one SIP message per WebSocket message and answers on the same connection', async () => {
    const recorder = await start();
    const { client, received, opened } = dial(['sip'], {
      headers: { Authorization: 'Bearer eyJ.test.token' },
    });
    await opened;
    expect(client.protocol).toBe('sip');
    client.send(REGISTER);
    client.send(Buffer.from(REGISTER), { binary: true });
    await until(() => recorder.messages.length === 2);
    expect(recorder.messages.map(([d]) => d.toString())).toEqual([REGISTER, REGISTER]);
    const flow = recorder.messages[0]![1];
    expect(flow).toMatchObject({ protocol: 'WS', remote: { address: '127.0.0.1' } });
    expect(flow.connectionId).toMatch(/^ws-/);
    expect(recorder.messages[1]![1].connectionId).toBe(flow.connectionId);

    // What the upgrade request carried, reported before the first message.
    expect(recorder.connections).toHaveLength(1);
    const [connected, handshake] = recorder.connections[0]!;
    expect(connected.connectionId).toBe(flow.connectionId);
    expect(handshake.url).toBe('/sip?x=1');
    expect(handshake.headers.authorization).toBe('Bearer eyJ.test.token');
    expect(handshake.headers['sec-websocket-protocol']).toBe('sip');

    await transport!.send(Buffer.from(OK), { connectionId: flow.connectionId! });
    await until(() => received.length > 0);
    expect(received.map(String)).toEqual([OK]);
  });

  it('selects sip among several offered subprotocols', async () => {
    await start();
    const { client, opened } = dial(['chat', 'sip']);
    await opened;
    expect(client.protocol).toBe('sip');
  });

  it('refuses a handshake that does not offer the sip subprotocol with 400', async () => {
    const recorder = await start();
    await expect(dial([]).opened).rejects.toThrow('HTTP 400');
    await expect(dial(['chat']).opened).rejects.toThrow('HTTP 400');
    expect(recorder.connections).toHaveLength(0);
    expect(transport!.openConnections).toBe(0);
  });

  it('refuses a page from an origin not listed with 403, and takes listed ones and none', async () => {
    const recorder = await start({ origins: ['https://app.example.com', 'http://localhost:3000'] });
    const refused = dial(['sip'], { origin: 'https://evil.example.net' });
    const status = new Promise<{ code?: number; body: string }>((resolve) =>
      refused.client.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += String(chunk)));
        res.on('end', () => resolve({ code: res.statusCode, body }));
      }),
    );
    await expect(refused.opened).rejects.toThrow('HTTP 403');
    expect(await status).toEqual({
      code: 403,
      body: 'Origin https://evil.example.net may not open SIP WebSocket connections',
    });
    // An opaque origin (a sandboxed page, a file) is no listed origin either.
    await expect(dial(['sip'], { origin: 'null' }).opened).rejects.toThrow('HTTP 403');
    expect(recorder.connections).toHaveLength(0);

    // Compared as browsers send it: case and the scheme's default port do not matter.
    await dial(['sip'], { origin: 'HTTPS://App.Example.com:443' }).opened;
    await dial(['sip'], { origin: 'http://localhost:3000' }).opened;
    // A client that sends no Origin is no browser page: the list is not about it.
    await dial(['sip']).opened;
    expect(recorder.connections.map(([, h]) => h.headers.origin)).toEqual([
      'HTTPS://App.Example.com:443',
      'http://localhost:3000',
      undefined,
    ]);
  });

  it('takes every origin when no list is given', async () => {
    await start();
    await dial(['sip'], { origin: 'https://anywhere.example.org' }).opened;
  });

  it('refuses an origin list entry that is no origin', async () => {
    await expect(
      WsTransport.listen('127.0.0.1', 0, new Recorder(), { origins: ['https://a.example/path'] }),
    ).rejects.toThrow(
      'Expected origins such as https://app.example.com (as URL.origin writes them) but received https://a.example/path',
    );
  });

  it('answers a CRLF CRLF keep-alive with CRLF and passes nothing up', async () => {
    const recorder = await start();
    const { client, received, opened } = dial(['sip']);
    await opened;
    client.send('\r\n\r\n');
    await until(() => received.length > 0);
    expect(received.map(String)).toEqual(['\r\n']);
    // A lone CRLF is a pong: no answer. What comes back next is the answer to the REGISTER.
    client.send('\r\n');
    client.send(REGISTER);
    await until(() => recorder.messages.length > 0);
    const flow = recorder.messages[0]![1];
    await transport!.send(Buffer.from(OK), { connectionId: flow.connectionId! });
    await until(() => received.length > 1);
    expect(received.map(String)).toEqual(['\r\n', OK]);
    expect(recorder.messages.map(([d]) => d.toString())).toEqual([REGISTER]);
  });

  it('closes a connection that sends a message over the maximum size (1009)', async () => {
    const recorder = await start({ maxMessageSize: 1000 });
    const { client, opened } = dial(['sip']);
    await opened;
    const closed = new Promise<number>((r) => client.once('close', (code) => r(code)));
    client.send(REGISTER + 'x'.repeat(1000));
    expect(await closed).toBe(1009);
    await until(() => recorder.closed.length > 0);
    expect(recorder.messages).toHaveLength(0);
    expect(recorder.errors.join()).toMatch(/Max payload size exceeded/);
    expect(transport!.openConnections).toBe(0);
  });

  it('reports a closed connection, after which sending to it fails', async () => {
    const recorder = await start();
    const { client, opened } = dial(['sip']);
    await opened;
    await until(() => recorder.connections.length === 1);
    const [flow] = recorder.connections[0]!;
    client.close(1000);
    await until(() => recorder.closed.length === 1);
    expect(recorder.closed[0]).toBe(flow);
    await expect(
      transport!.send(Buffer.from(OK), { connectionId: flow.connectionId! }),
    ).rejects.toThrow(/is closed/);
  });

  it('cannot dial a client: sending to an address fails', async () => {
    await start();
    await expect(
      transport!.send(Buffer.from(OK), { address: '127.0.0.1', port: 5060 }),
    ).rejects.toThrow(/cannot be dialled/);
  });

  it('pings every connection and closes one that stops answering', async () => {
    const recorder = await start({ pingIntervalMs: 100 });
    const answering = dial(['sip']);
    const silent = dial(['sip'], { autoPong: false });
    await Promise.all([answering.opened, silent.opened]);
    let pings = 0;
    answering.client.on('ping', () => pings++);
    const silentClosed = new Promise((r) => silent.client.once('close', r));
    await silentClosed;
    await until(() => recorder.closed.length === 1);
    expect(pings).toBeGreaterThan(0);
    expect(answering.client.readyState).toBe(WebSocket.OPEN);
    expect(transport!.openConnections).toBe(1);
  });

  it('refuses bad options at the edge', async () => {
    await expect(
      WsTransport.listen('127.0.0.1', 0, new Recorder(), { maxMessageSize: 0 }),
    ).rejects.toThrow('Expected a positive integer for maxMessageSize but received 0');
    await expect(
      WsTransport.listen('127.0.0.1', 0, new Recorder(), { tls: { cert: '', key: 'k' } }),
    ).rejects.toThrow('Expected a PEM string or Buffer for cert but received an empty string');
  });
});
