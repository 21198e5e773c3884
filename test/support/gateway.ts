import { Writable } from 'node:stream';
import { buildGateway, type Gateway } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import type { Clock } from '../../src/core/clock.js';
import { TEST_SECRET_KEY } from './redis-server.js';

export interface Credentials {
  id: string;
  token: string;
}

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

export interface TestGateway {
  gateway: Gateway;
  main: Credentials;
  /** Everything the gateway logged, one JSON line per entry. */
  logs: string[];
  request(
    method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH',
    path: string,
    options?: {
      as?: Credentials | null;
      json?: unknown;
      form?: Record<string, string>;
      headers?: Record<string, string>;
      /** The client's address as the gateway sees it (inject's default: 127.0.0.1). */
      remoteAddress?: string;
    },
  ): Promise<TestResponse>;
  /** GETs a file (a media URL) as the main account: its status, type and bytes. */
  download(path: string): Promise<{ status: number; contentType: string; body: Buffer }>;
  /** Creates a subaccount of the main account and returns its credentials. */
  subaccount(name?: string): Promise<Credentials>;
  close(): Promise<void>;
}

/**
 * A gateway built in-process and exercised with Fastify's inject(): on the embedded store, or
 * on a real redis-server when a URL is given. Requests run as the main account unless `as` says.
 */
export async function startGateway(
  options: {
    redisUrl?: string;
    env?: Record<string, string>;
    clock?: Clock;
    /** Starts the listeners (HTTP and SIP on 127.0.0.1, free ports) as `npm start` does. */
    listen?: boolean;
    /** Names the outbound guard resolves from this table instead of DNS (read at each use). */
    outboundHosts?: Record<string, string[]>;
    /** What POST /operator/v1/Node/Drain/ does (the process's own drain, for `npm start`). */
    onDrainRequested?: () => void;
  } = {},
): Promise<TestGateway> {
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const config = loadConfig({
    VOXGATE_DATA_DIR: '',
    VOXGATE_RATE_LIMIT: '0',
    VOXGATE_LOG_LEVEL: 'info',
    // One media worker, on a range of its own so parallel test files do not meet.
    VOXGATE_MEDIA_WORKERS: '1',
    VOXGATE_RTP_PORTS: randomRtpRange(),
    VOXGATE_RTP_HOST: '127.0.0.1',
    // Tests add numbers with labels for carriers and call them from loopback; the IP check of
    // IncomingCarriers has tests of its own, which set `enforce`.
    VOXGATE_INBOUND_CARRIERS: 'open',
    ...(options.redisUrl
      ? { VOXGATE_REDIS_URL: options.redisUrl, VOXGATE_SECRET_KEY: TEST_SECRET_KEY }
      : {}),
    ...(options.listen
      ? {
          VOXGATE_HTTP_HOST: '127.0.0.1',
          VOXGATE_HTTP_PORT: '0',
          VOXGATE_SIP_HOST: '127.0.0.1',
          VOXGATE_SIP_PORT: '0',
          VOXGATE_SIP_WS_PORT: '0',
        }
      : {}),
    ...options.env,
  });
  const gateway = await buildGateway(config, {
    logStream,
    clock: options.clock,
    ...(options.outboundHosts ? { outboundHosts: options.outboundHosts } : {}),
    ...(options.onDrainRequested ? { onDrainRequested: options.onDrainRequested } : {}),
  });
  if (options.listen) await gateway.listen();
  const main = { id: gateway.mainAccount.authId, token: gateway.mainAccount.authToken };

  const request: TestGateway['request'] = async (method, path, opts = {}) => {
    const as = opts.as === undefined ? main : opts.as;
    const headers: Record<string, string> = { ...opts.headers };
    if (as)
      headers.authorization = `Basic ${Buffer.from(`${as.id}:${as.token}`).toString('base64')}`;
    let payload: string | undefined;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(opts.json);
    } else if (opts.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(opts.form).toString();
    }
    const res = await gateway.app.inject({
      method,
      url: path,
      headers,
      payload,
      ...(opts.remoteAddress ? { remoteAddress: opts.remoteAddress } : {}),
    });
    let body: unknown = undefined;
    try {
      body = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body, text: res.body };
  };

  return {
    gateway,
    main,
    logs,
    request,
    download: async (path) => {
      const authorization = `Basic ${Buffer.from(`${main.id}:${main.token}`).toString('base64')}`;
      const res = await gateway.app.inject({
        method: 'GET',
        url: path,
        headers: { authorization },
      });
      return {
        status: res.statusCode,
        contentType: String(res.headers['content-type'] ?? ''),
        body: res.rawPayload,
      };
    },
    subaccount: async (name = 'sub') => {
      const res = await request('POST', `/v1/Account/${main.id}/Subaccount/`, { json: { name } });
      if (res.status !== 201) throw new Error(`subaccount create failed: ${res.text}`);
      return { id: res.body.auth_id, token: res.body.auth_token };
    },
    close: () => gateway.close(),
  };
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function randomRtpRange(): string {
  const min = 20000 + 2 * Math.floor(Math.random() * 15000);
  return `${min}-${min + 399}`;
}
