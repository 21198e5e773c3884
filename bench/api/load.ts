import autocannon from 'autocannon';

/** CPU seconds used so far by the HTTP server process, and by the Redis behind it if any. */
export interface CpuSample {
  server: number;
  redis: number | null;
}

export interface LoadTarget {
  baseUrl: string;
  cpuSeconds(): Promise<CpuSample>;
}

/** What one server answered under load; latencies in ms (autocannon keeps whole ms). */
export interface LoadFigures {
  requestsPerSecond: number;
  latencyMeanMs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  responses: number;
  /** Answers outside 2xx, by status code; must be empty for the figures to mean anything. */
  non2xx: Record<string, number>;
  /** Connection errors and timeouts. */
  errors: number;
  /** Including headers. */
  bytesPerResponse: number;
  /** CPU (user + system) the server process spent per answer, in microseconds. */
  serverCpuMicrosPerRequest: number;
  /** The same for redis-server, when the server uses it. */
  redisCpuMicrosPerRequest: number | null;
  /** Server and Redis together: the cost of an answer that the load generator cannot distort. */
  totalCpuMicrosPerRequest: number;
  /** The server process's share of one core over the measured run. */
  serverCpuPercent: number;
  /** The load generator's share of one core: near 100 means it, not the server, set the pace. */
  loaderCpuPercent: number;
}

export interface LoadOptions {
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
}

/**
 * Closed-loop load: `connections` keep-alive connections each send the next request as soon as
 * the previous answer arrives, cycling through `paths`. A warm-up run is thrown away first so
 * that the JIT, the store's caches and the sockets are settled.
 */
export async function measureLoad(
  target: LoadTarget,
  paths: string[],
  headers: Record<string, string>,
  options: LoadOptions,
): Promise<LoadFigures> {
  const run = (duration: number) => {
    let next = 0;
    return autocannon({
      url: target.baseUrl,
      connections: options.connections,
      duration,
      headers,
      requests: [
        {
          method: 'GET',
          setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }),
        },
      ],
    });
  };
  await run(options.warmupSeconds);
  const cpuBefore = await target.cpuSeconds();
  const loaderBefore = process.cpuUsage();
  const result = await run(options.durationSeconds);
  const loader = process.cpuUsage(loaderBefore);
  const cpuAfter = await target.cpuSeconds();

  const non2xx: Record<string, number> = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats)) {
    if (!status.startsWith('2')) non2xx[status] = count;
  }
  const perRequest = (seconds: number) => Math.round((seconds / result.requests.total) * 1e6);
  const server = perRequest(cpuAfter.server - cpuBefore.server);
  const redis =
    cpuAfter.redis === null || cpuBefore.redis === null
      ? null
      : perRequest(cpuAfter.redis - cpuBefore.redis);
  return {
    requestsPerSecond: result.requests.average,
    latencyMeanMs: result.latency.mean,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMaxMs: result.latency.max,
    responses: result.requests.total,
    non2xx,
    errors: result.errors + result.timeouts,
    bytesPerResponse: result['2xx'] > 0 ? Math.round(result.throughput.total / result['2xx']) : 0,
    serverCpuMicrosPerRequest: server,
    redisCpuMicrosPerRequest: redis,
    totalCpuMicrosPerRequest: server + (redis ?? 0),
    serverCpuPercent: Math.round(((cpuAfter.server - cpuBefore.server) / result.duration) * 100),
    loaderCpuPercent: Math.round((loader.user + loader.system) / 1e4 / result.duration),
  };
}
