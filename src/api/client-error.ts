import { maxHeaderSize as defaultMaxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { newUuid } from '../core/ids.js';

/** What Node's HTTP parser reports with a 'clientError'. */
export interface ClientError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: unknown;
}

/**
 * Answers a request Node's HTTP parser refused before Fastify saw it (headers over the limit, a
 * request line that is not HTTP, a request that never arrived in full) with the error envelope,
 * on the socket itself: there is no request object to answer through. It never throws; when
 * there is nothing sensible left to write, the socket is closed.
 */
export function clientErrorHandler(
  log: FastifyBaseLogger,
  maxHeaderSize: number = defaultMaxHeaderSize,
): (error: ClientError, socket: Socket) => void {
  // The parser may report again for what the client goes on sending: one answer per socket.
  const answered = new WeakSet<Socket>();
  return (error, socket) => {
    try {
      if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
      answered.add(socket);
      // A response of the socket's current request already on its way cannot be followed by
      // another status line.
      const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })
        ._httpMessage;
      if (!socket.writable || current?.headersSent) {
        socket.destroy();
        return;
      }
      const { status, message } = describeClientError(error, maxHeaderSize);
      const apiId = newUuid();
      const body = JSON.stringify({ api_id: apiId, error: message });
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          'Content-Type: application/json\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
      // A client that keeps the connection open after the answer is not waited for.
      setTimeout(() => socket.destroy(), 1000).unref();
      log.info(
        { api_id: apiId, code: error.code, status, remote: socket.remoteAddress },
        'request refused by the HTTP parser',
      );
    } catch {
      socket.destroy();
    }
  };
}

export function describeClientError(
  error: ClientError,
  maxHeaderSize: number,
): { status: number; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      // The request line counts toward the same limit as the headers: when it alone passes the
      // limit, it is the URI that is too long.
      if (requestLineLonger(error.rawPacket, maxHeaderSize))
        return {
          status: 414,
          message: `the request's URI is too long: the request line and headers may take at most ${maxHeaderSize} bytes`,
        };
      return {
        status: 431,
        message: `the request's headers exceed ${maxHeaderSize} bytes (the request line included)`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: "the request body's chunk extensions are too large" };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'the request did not arrive in full in time' };
    default:
      return {
        status: 400,
        message: `the request is not valid HTTP/1.1: ${error.reason ?? error.code ?? 'unreadable'}`,
      };
  }
}

/** Whether the data read starts with a request line longer than `limit` (or not ended in it). */
function requestLineLonger(rawPacket: unknown, limit: number): boolean {
  if (!Buffer.isBuffer(rawPacket)) return false;
  if (!/^[A-Z]+ \S/.test(rawPacket.subarray(0, 32).toString('latin1'))) return false;
  const end = rawPacket.indexOf(0x0a);
  return end < 0 || end >= limit;
}
