import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './free-port.js';

/**
 * A TCP relay on loopback to a server (Redis), that a test can cut and restore: cut() drops
 * every connection and refuses new ones, as a network partition between one client and the
 * server does, while other clients still reach the server directly.
 */
export interface TcpProxy {
  port: number;
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, scheme = 'redis'): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((client) => {
        const upstream = connect(targetPort, '127.0.0.1');
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
      server = next;
    });
  const cut = async () => {
    const closing = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };
  await listen();
  return {
    port,
    url: `${scheme}://127.0.0.1:${port}`,
    cut,
    restore: listen,
    close: cut,
  };
}
