import { Gauge, type Registry } from 'prom-client';
import { httpWorkerState, onHttpWorkerCrash } from './http-exchange.js';

interface CrashLog {
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * The HTTP worker on /metrics (requests it has now, deaths so far) and in the log (each death,
 * with how many requests failed with it). The function returned stops the logging.
 */
export function httpWorkerMetrics(registry: Registry, log: CrashLog): () => void {
  new Gauge({
    name: 'voxgate_http_worker_requests',
    help: 'Requests to client URLs (callbacks, answer documents, upstream APIs) the HTTP worker thread has now',
    registers: [registry],
    collect() {
      this.set(httpWorkerState().inFlight);
    },
  });
  new Gauge({
    name: 'voxgate_http_worker_crashes_total',
    help: 'HTTP worker threads that died in this process; their requests failed as network errors and the next request started a new one',
    registers: [registry],
    collect() {
      this.set(httpWorkerState().crashes);
    },
  });
  return onHttpWorkerCrash((reason, failedRequests) =>
    log.error({ reason, failedRequests }, 'HTTP worker crashed'),
  );
}
