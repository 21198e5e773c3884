import type { Server } from 'node:net';
import type { Address } from './flow.js';

/** Starts a listening server (net, tls, http or https) and resolves with the address it bound. */
export function listenServer(server: Server, host: string, port: number): Promise<Address> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const bound = server.address() as { address: string; port: number };
      resolve({ address: bound.address, port: bound.port });
    });
  });
}
