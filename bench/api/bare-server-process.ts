import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/support/free-port.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

const BARE_SERVER_TS = fileURLToPath(new URL('./bare-server.ts', import.meta.url));

/** The JSON texts the baseline answers with, one per benchmarked route. */
export interface BareServerBodies {
  detail: string;
  list: string;
}

/** Starts bench/api/bare-server.ts in its own process, answering with `bodies`. */
export async function startBareServer(bodies: BareServerBodies): Promise<ServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-bench-'));
  const bodiesFile = join(dir, 'bodies.json');
  writeFileSync(bodiesFile, JSON.stringify(bodies));
  const port = await freePort();
  try {
    return await startServerProcess({
      name: 'bare fastify',
      args: ['--import', 'tsx', BARE_SERVER_TS, String(port), bodiesFile],
      env: { ...process.env, NODE_ENV: 'production' },
      baseUrl: `http://127.0.0.1:${port}`,
      readyPath: '/health',
    });
  } finally {
    // The server has read the bodies once it answers /health.
    rmSync(dir, { recursive: true, force: true });
  }
}
