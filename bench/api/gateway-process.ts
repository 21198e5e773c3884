import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { newAuthId, newAuthToken } from '../../src/core/ids.js';
import { freePort } from '../../test/support/free-port.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

/** One key for every node a run starts on Redis: they share the stored secrets. */
const SECRET_KEY = randomBytes(32).toString('hex');

const MAIN_JS = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url));

export interface GatewayProcess extends ServerProcess {
  authId: string;
  /** The Basic Authorization header value of the main account. */
  authorization: string;
}

/**
 * The built gateway (`dist/src/main.js`) as operators run it, on the embedded in-memory store or
 * on Redis. Rate limiting is off (the load would hit 429s) and logging is at warn, since a log
 * line per request would cost more than the request.
 */
export async function startGatewayProcess(options: {
  redisUrl: string | null;
  /** More settings (the SIP port, say); SIP listens on free ports unless told otherwise. */
  env?: Record<string, string>;
}): Promise<GatewayProcess> {
  const port = await freePort();
  const authId = newAuthId('MA');
  const authToken = newAuthToken();
  const env = gatewayEnv({
    VOXGATE_HTTP_PORT: String(port),
    VOXGATE_AUTH_ID: authId,
    VOXGATE_AUTH_TOKEN: authToken,
    // The load's numbers name no IncomingCarrier.
    VOXGATE_INBOUND_CARRIERS: 'open',
    VOXGATE_SIP_PORT: '0',
    ...(options.redisUrl
      ? { VOXGATE_REDIS_URL: options.redisUrl, VOXGATE_SECRET_KEY: SECRET_KEY }
      : {}),
    ...options.env,
  });
  const server = await startServerProcess({
    name: options.redisUrl ? 'gateway (redis)' : 'gateway (embedded)',
    // BENCH_GATEWAY_NODE_ARGS: flags for the gateway's node, e.g. --cpu-prof to profile it.
    args: [...(process.env.BENCH_GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? []), MAIN_JS],
    env,
    baseUrl: `http://127.0.0.1:${port}`,
    readyPath: '/health',
  });
  return {
    ...server,
    authId,
    authorization: `Basic ${Buffer.from(`${authId}:${authToken}`).toString('base64')}`,
  };
}

/**
 * The environment a benchmarked gateway runs with: the shell's own variables except every
 * VOXGATE_ one, then loopback listeners, no rate limit, logs at warn, the in-memory embedded
 * store, and `settings` on top.
 */
export function gatewayEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('VOXGATE_')) env[key] = value;
  }
  return Object.assign(env, {
    NODE_ENV: 'production',
    VOXGATE_HTTP_HOST: '127.0.0.1',
    VOXGATE_RATE_LIMIT: '0',
    VOXGATE_LOG_LEVEL: 'warn',
    VOXGATE_DATA_DIR: '',
    VOXGATE_SIP_HOST: '127.0.0.1',
    VOXGATE_SIP_WS_PORT: '0',
    ...settings,
  });
}
