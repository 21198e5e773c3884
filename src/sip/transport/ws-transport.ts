import { isUtf8 } from 'node:buffer';
import {
  STATUS_CODES,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http';
import { createServer as createSecureServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { DEFAULT_MAX_SIZE } from '../message/index.js';
import type { ConnectionListener } from './connection-listener.js';
import { connectionIdPrefix, flowKey, type Address, type Flow } from './flow.js';
import { handshakeError } from './handshake-error.js';
import { listenServer } from './listen-server.js';
import { checkCredentials, type TlsCredentials } from './tls-credentials.js';

/** What the HTTP upgrade request that opened a WebSocket connection carried. */
export interface WsHandshake {
  /** The request target: path and query. */
  readonly url: string;
  /**
   * The request's header fields, names in lower case. `authorization` may hold a bearer token
   * (RFC 8898) and `cookie` a session (RFC 7118 4.1): both are secrets, never to be logged.
   */
  readonly headers: IncomingHttpHeaders;
}

export interface WsTransportListener extends ConnectionListener {
  /** A client completed the handshake; called before any message from the connection. */
  onConnection?(flow: Flow, handshake: WsHandshake): void;
}

export interface WsTransportOptions {
  /** Serves WSS (the handshake over TLS) with this certificate; plain WS without. */
  tls?: TlsCredentials;
  /**
   * The largest WebSocket message, hence SIP message, accepted (65535 octets unless given);
   * a larger one closes the connection with 1009 (RFC 6455 7.4.1).
   */
  maxMessageSize?: number;
  /**
   * How often every connection is sent a WebSocket Ping (30 s unless given; 0 sends none). A
   * connection that sent nothing at all, not even the Pong, since the previous Ping is closed.
   */
  pingIntervalMs?: number;
  /**
   * The origins (`scheme://host[:port]`, as `URL.origin` writes them) whose pages may connect;
   * every origin when not given. A handshake from another origin gets 403 (RFC 6455 10.2). One
   * without Origin comes from no browser (RFC 6455 4.1 makes only browsers send it) and is
   * accepted: the check keeps other sites' pages out, it is not authentication.
   */
  origins?: readonly string[];
}

interface WsConnection {
  id: string;
  socket: WebSocket;
  flow: Flow;
  /** Something arrived since the last Ping. */
  alive: boolean;
}

/** RFC 7118 4.1: the WebSocket subprotocol a SIP client names in its handshake. */
const SUBPROTOCOL = 'sip';
/** CR LF read as one little-endian 16-bit word. */
const CRLF = 0x0a0d;

/**
 * SIP over WebSocket (RFC 7118) as a SIP WebSocket Server: clients connect to it; it opens no
 * connection itself and answers on the one a message came on. Over https it is WSS.
 *
 * Keep-alive and idle connections: RFC 7118 6 allows both WebSocket Ping frames and the CRLF
 * keep-alive of RFC 5626 3.5.1. A client's CRLF CRLF message is answered with a CRLF message;
 * a client's Ping is answered with a Pong by the WebSocket layer. The server itself sends each
 * connection a Ping every `pingIntervalMs` and closes one that has sent nothing since the
 * previous Ping: browsers answer Pings without any script, so a registered softphone that
 * sends no SIP for hours stays connected while a vanished one is dropped within two intervals.
 */
export class WsTransport {
  private readonly connections = new Map<string, WsConnection>();
  private sequence = 0;
  /**
   * Starts every connection id: the protocol and a random part of this transport's own. A
   * registration stores the id of the connection it came on, and every node of a cluster
   * reads it: with a bare counter, `ws-3` on one node would name another client's connection
   * on the next.
   */
  private readonly idPrefix: string;
  private readonly sockets: WebSocketServer;
  private readonly pinger: NodeJS.Timeout | null = null;
  private readonly origins: ReadonlySet<string> | null;

  private constructor(
    readonly protocol: 'WS' | 'WSS',
    private readonly server: Server,
    readonly local: Address,
    private readonly listener: WsTransportListener,
    options: WsTransportOptions,
  ) {
    this.sockets = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: options.maxMessageSize ?? DEFAULT_MAX_SIZE,
      // Only reached once the offer was checked to include it (see upgrade below).
      handleProtocols: () => SUBPROTOCOL,
    });
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.upgrade(request, socket, head),
    );
    server.on('request', (_request, response) => {
      response.writeHead(426, { Upgrade: 'websocket', Connection: 'close' });
      response.end();
    });
    // A handshake that fails never becomes a connection: only report it.
    server.on('tlsClientError', (error: Error, socket: TLSSocket) =>
      listener.onError?.(handshakeError(protocol, socket, error)),
    );
    this.idPrefix = connectionIdPrefix(protocol);
    this.origins = options.origins ? new Set(options.origins) : null;
    const interval = options.pingIntervalMs ?? 30_000;
    if (interval > 0) {
      this.pinger = setInterval(() => this.pingAll(), interval);
      this.pinger.unref();
    }
  }

  static async listen(
    host: string,
    port: number,
    listener: WsTransportListener,
    options: WsTransportOptions = {},
  ): Promise<WsTransport> {
    checkOptions(options);
    const server = options.tls
      ? createSecureServer({ cert: options.tls.cert, key: options.tls.key })
      : createServer();
    const local = await listenServer(server, host, port);
    return new WsTransport(options.tls ? 'WSS' : 'WS', server, local, listener, options);
  }

  get openConnections(): number {
    return this.connections.size;
  }

  /**
   * Sends one SIP message as one WebSocket message (RFC 7118 5.1): a text frame when it is
   * UTF-8, as SIP messages nearly always are, else a binary frame. Only on a connection a
   * client opened: a SIP WebSocket Server cannot dial an address.
   */
  async send(data: Buffer, to: { connectionId: string } | Address): Promise<void> {
    if (!('connectionId' in to)) {
      throw new Error(
        `${flowKey(this.protocol, to)}: no connection, and WebSocket clients cannot be dialled`,
      );
    }
    const connection = this.connections.get(to.connectionId);
    if (!connection || connection.socket.readyState !== WebSocket.OPEN) {
      throw new Error(`connection ${to.connectionId} is closed`);
    }
    await new Promise<void>((resolve, reject) =>
      connection.socket.send(data, { binary: !isUtf8(data) }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }

  close(): Promise<void> {
    if (this.pinger) clearInterval(this.pinger);
    for (const c of this.connections.values()) c.socket.terminate();
    this.sockets.close();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const origin = request.headers.origin;
    if (this.origins && origin !== undefined && !this.origins.has(originOf(origin))) {
      // RFC 6455 10.2: a server that accepts only some origins answers the others with 403.
      refuse(socket, 403, `Origin ${origin} may not open SIP WebSocket connections`);
      return;
    }
    if (!offersSip(request.headers['sec-websocket-protocol'])) {
      // RFC 7118 4.1: the client MUST offer "sip" in Sec-WebSocket-Protocol. A handshake that
      // does not is no SIP WebSocket handshake, and RFC 6455 4.2.1 answers a handshake the
      // server cannot accept with an HTTP error such as 400. (Completing it without naming a
      // subprotocol, as RFC 6455 4.2.2 would allow, leaves a client that never asked for SIP
      // on a connection that carries nothing else.)
      refuse(socket, 400, `Sec-WebSocket-Protocol must offer "${SUBPROTOCOL}" (RFC 7118)`);
      return;
    }
    // RFC 7118 4.1: the 101 reply MUST name "sip" in Sec-WebSocket-Protocol (handleProtocols).
    this.sockets.handleUpgrade(request, socket, head, (ws) => this.adopt(ws, request));
  }

  private adopt(socket: WebSocket, request: IncomingMessage): void {
    const id = `${this.idPrefix}-${++this.sequence}`;
    const remote = {
      address: request.socket.remoteAddress ?? '',
      port: request.socket.remotePort ?? 0,
    };
    const flow: Flow = { protocol: this.protocol, local: this.local, remote, connectionId: id };
    const connection: WsConnection = { id, socket, flow, alive: true };
    this.connections.set(id, connection);
    // Synchronous with the upgrade: nothing of the connection has been read yet.
    this.listener.onConnection?.(flow, { url: request.url ?? '/', headers: request.headers });
    socket.on('message', (data: RawData) => {
      connection.alive = true;
      this.receive(connection, toBuffer(data));
    });
    // RFC 6455 5.5.2: ws answers a client's Ping itself; either way the client is there.
    socket.on('ping', () => (connection.alive = true));
    socket.on('pong', () => (connection.alive = true));
    socket.on('error', (error) =>
      this.listener.onError?.(new Error(`${flowKey(this.protocol, remote)}: ${error.message}`)),
    );
    socket.on('close', () => {
      this.connections.delete(id);
      this.listener.onClose?.(flow);
    });
  }

  private receive(connection: WsConnection, data: Buffer): void {
    const crlfs = crlfCount(data);
    // RFC 7118 6 allows the CRLF keep-alive of RFC 5626 3.5.1 over WebSocket: a message of
    // CRLF CRLF is a ping, answered with a CRLF pong; a lone CRLF is a pong, and needs nothing.
    if (crlfs >= 2) connection.socket.send('\r\n');
    // RFC 7118 5.1: each WebSocket message carries exactly one SIP message.
    else if (crlfs < 0) this.listener.onMessage(data, connection.flow);
  }

  private pingAll(): void {
    for (const connection of this.connections.values()) {
      if (!connection.alive) {
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      connection.socket.ping();
    }
  }
}

function checkOptions(options: WsTransportOptions): void {
  const { maxMessageSize, pingIntervalMs } = options;
  if (maxMessageSize !== undefined && !(Number.isInteger(maxMessageSize) && maxMessageSize > 0)) {
    throw new RangeError(
      `Expected a positive integer for maxMessageSize but received ${maxMessageSize}`,
    );
  }
  if (pingIntervalMs !== undefined && !(Number.isInteger(pingIntervalMs) && pingIntervalMs >= 0)) {
    throw new RangeError(
      `Expected an integer of 0 or more for pingIntervalMs but received ${pingIntervalMs}`,
    );
  }
  for (const origin of options.origins ?? []) {
    if (originOf(origin) !== origin || !/^https?:/.test(origin))
      throw new RangeError(
        `Expected origins such as https://app.example.com (as URL.origin writes them) but received ${origin}`,
      );
  }
  if (options.tls) checkCredentials(options.tls);
}

/** An Origin header's value as URL.origin writes it (lower case, no default port). */
function originOf(value: string): string {
  try {
    return new URL(value).origin;
  } catch {
    return value; // "null" (an opaque origin) or garbage: matches no configured origin
  }
}

/** Whether a Sec-WebSocket-Protocol offer (a comma-separated token list) names SIP. */
function offersSip(offer: string | undefined): boolean {
  return offer !== undefined && offer.split(',').some((p) => p.trim() === SUBPROTOCOL);
}

/** Answers an upgrade request with an HTTP error and closes the connection. */
function refuse(socket: Duplex, status: number, reason: string): void {
  socket.on('error', () => socket.destroy());
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
      `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`,
  );
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** The number of CRLFs when the message is nothing but CRLFs, else -1. */
function crlfCount(data: Buffer): number {
  if (data.length % 2 !== 0) return -1;
  for (let i = 0; i < data.length; i += 2) if (data.readUInt16LE(i) !== CRLF) return -1;
  return data.length / 2;
}
