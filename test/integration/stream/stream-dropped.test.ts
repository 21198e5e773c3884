import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { StreamServer } from '../../support/stream-server.js';
import { until } from '../../support/wait.js';

/**
 * A stream whose WebSocket server goes away mid-call is told in the gateway's log (a warn line
 * with the stream, the call and why), and the call carries on as its stream's rules say: one
 * started through the API leaves the call up; keepCallAlive lets the document run on.
 */
let gw: TestGateway;
let app: ClientApp;
let server: StreamServer;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  [app, server] = await Promise.all([ClientApp.start(), StreamServer.start()]);
  gw = await startGateway({ listen: true });
});

afterEach(async () => {
  await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/`);
  await until(() => gw.gateway.calls.liveCount === 0, 10_000);
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await gw.close();
  await server.close();
  await app.close();
});

const droppedLines = () =>
  gw.logs
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.msg === 'audio stream ended by its WebSocket server or connection');

const isLive = async (uuid: string) =>
  (await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${uuid}/?status=live`)).status === 200;

describe('a stream stopped while its server is still accepting (a cold start)', () => {
  it('leaves no connection open: the handshake is given up, and the server told nothing', async () => {
    // A server that takes half a second to accept (a cold start).
    const sockets = new WebSocketServer({ noServer: true });
    const accepted: { socket: WebSocket; messages: string[]; closedAt: number | null }[] = [];
    const http = createServer();
    http.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
      setTimeout(
        () =>
          sockets.handleUpgrade(request, socket, head, (ws) => {
            const entry = { socket: ws, messages: [] as string[], closedAt: null as number | null };
            ws.on('message', (data) => entry.messages.push(String(data)));
            ws.on('close', () => (entry.closedAt = Date.now()));
            accepted.push(entry);
          }),
        500,
      );
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/slow`;
      const placed = await placeCarrierCall(
        { gw, app, carriers, peers },
        '<Response><Wait length="30"/></Response>',
      );
      const uuid = await answeredCallUuid(app, placed.requestUuid);
      const streams = `/v1/Account/${gw.main.id}/Call/${uuid}/Stream/`;
      const started = await gw.request('POST', streams, { json: { service_url: url } });
      expect(started.status).toBe(201);
      const stopped = await gw.request('DELETE', `${streams}${started.body.stream_id}/`);
      expect(stopped.status).toBe(204);
      // The gateway gives the handshake up (or closes at once should it complete): a second
      // after the server would have accepted, no connection of it is open, and none was told
      // anything.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(accepted.filter((entry) => entry.closedAt === null)).toEqual([]);
      expect(accepted.flatMap((entry) => entry.messages)).toEqual([]);
      expect(await isLive(uuid)).toBe(true);
    } finally {
      for (const { socket } of accepted) socket.terminate();
      sockets.close();
      await new Promise((resolve) => http.close(resolve));
    }
  }, 30_000);
});

describe('a stream whose server drops it', () => {
  it('is logged with its id, its call and the close code and reason; the call goes on', async () => {
    const placed = await placeCarrierCall(
      { gw, app, carriers, peers },
      '<Response><Wait length="30"/></Response>',
    );
    const uuid = await answeredCallUuid(app, placed.requestUuid);
    const index = server.connections.length;
    const started = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/${uuid}/Stream/`, {
      json: { service_url: server.url },
    });
    expect(started.status).toBe(201);
    const streamId = started.body.stream_id as string;
    const connection = await server.connection(index);
    await until(() => connection.of('media').length > 0, 10_000);
    const before = droppedLines().length;

    connection.socket.close(4000, 'model crashed');

    await until(() => droppedLines().length === before + 1, 5000);
    expect(droppedLines().at(-1)).toMatchObject({
      level: 40,
      streamId,
      callUuid: uuid,
      state: 'failed',
      reason: 'the server closed the connection (4000: model crashed)',
    });
    expect(await isLive(uuid)).toBe(true);
  }, 30_000);

  it('is logged when the connection is cut without a close frame; keepCallAlive runs on', async () => {
    const index = server.connections.length;
    const placed = await placeCarrierCall(
      { gw, app, carriers, peers },
      `<Response><Stream keepCallAlive="true">${server.url}</Stream>` +
        `<Redirect>${app.baseUrl}/after-stream</Redirect></Response>`,
    );
    app.serve('/after-stream', { body: '<Response><Wait length="30"/></Response>' });
    const uuid = await answeredCallUuid(app, placed.requestUuid);
    const connection = await server.connection(index);
    await until(() => connection.of('media').length > 0, 10_000);
    const streamId = (connection.of('start')[0]!.start as { streamId: string }).streamId;
    const before = droppedLines().length;

    connection.socket.terminate();

    await until(() => droppedLines().length === before + 1, 5000);
    expect(droppedLines().at(-1)).toMatchObject({
      level: 40,
      streamId,
      callUuid: uuid,
      state: 'failed',
      reason: expect.stringMatching(/^the server closed the connection \(1006/),
    });
    // The stream's end lets the document go on to its next verb, as keepCallAlive says.
    await until(() => app.requestsTo('/after-stream').length === 1, 5000);
    expect(await isLive(uuid)).toBe(true);
  }, 30_000);

  it('is logged with what broke the protocol when the server sends a frame that is no frame', async () => {
    const placed = await placeCarrierCall(
      { gw, app, carriers, peers },
      '<Response><Wait length="30"/></Response>',
    );
    const uuid = await answeredCallUuid(app, placed.requestUuid);
    const index = server.connections.length;
    const started = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/${uuid}/Stream/`, {
      json: { service_url: server.url },
    });
    expect(started.status).toBe(201);
    const connection = await server.connection(index);
    await until(() => connection.of('media').length > 0, 10_000);
    const before = droppedLines().length;

    // A final frame of opcode 0xF, which RFC 6455 5.2 reserves: the client must fail the
    // connection.
    (connection.socket as unknown as { _socket: Socket })._socket.write(Buffer.from([0x8f, 0x00]));

    await until(() => droppedLines().length === before + 1, 5000);
    expect(droppedLines().at(-1)).toMatchObject({
      streamId: started.body.stream_id,
      callUuid: uuid,
      reason: 'the server closed the connection (1006: Invalid WebSocket frame: invalid opcode 15)',
    });
    expect(await isLive(uuid)).toBe(true);
  }, 30_000);
});
