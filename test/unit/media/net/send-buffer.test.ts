import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { capSendBuffer } from '../../../../src/media/net/send-buffer.js';

describe('capSendBuffer', () => {
  it('sets the kernel send buffer of a connected TCP socket, and refuses a tiny one', async () => {
    const server = createServer((peer) => peer.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const socket: Socket = await new Promise((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
    });
    try {
      const taken = capSendBuffer(socket, 16 * 1024);
      // Linux keeps twice what it is given (bookkeeping); either way it is no longer megabytes.
      expect(taken).toBeGreaterThanOrEqual(16 * 1024);
      expect(taken).toBeLessThanOrEqual(64 * 1024);
      expect(() => capSendBuffer(socket, 100)).toThrow(/at least 1024 bytes/);
    } finally {
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
