import {
  basicAuthorization,
  describeTarget,
  type GatewayTarget,
  type SkippedInTarget,
  type TargetRecord,
} from '../api/gateway-target.js';
import { readSample } from '../api/prometheus-sample.js';
import type { CallsGateway } from './gateway.js';
import { CPU_METRIC, metricsUsage, noUsage } from './gateway-usage.js';

const CHECK_TIMEOUT_MS = 10_000;

/** A gateway running elsewhere, checked, and where its CPU figure comes from. */
export interface TargetGateway {
  gateway: CallsGateway;
  cpu: { from: 'metrics' | 'unavailable'; detail: string };
}

/**
 * Checks a gateway the bench did not start before any load: /health answers 200, the
 * credentials are accepted (GET Account/{auth_id}/), and /metrics has the process CPU counter.
 * Nothing here stops it; its log and its threads are not the bench's to see.
 */
export async function connectTargetGateway(target: GatewayTarget): Promise<TargetGateway> {
  const authorization = basicAuthorization(target.authId, target.authToken);
  const get = async (path: string, withAuth: boolean) => {
    const url = `${target.gatewayUrl}${path}`;
    try {
      const res = await fetch(url, {
        headers: withAuth ? { authorization } : {},
        signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      });
      return { status: res.status, body: await res.text() };
    } catch (error) {
      throw new Error(`GET ${url} failed: ${(error as Error).message}`);
    }
  };
  const health = await get('/health', false);
  if (health.status !== 200)
    throw new Error(
      `GET ${target.gatewayUrl}/health answered ${health.status}: the gateway does not take work now`,
    );
  const account = await get(`/v1/Account/${encodeURIComponent(target.authId)}/`, true);
  if (account.status === 401 || account.status === 403)
    throw new Error(
      `the gateway refused the credentials of ${target.authId} (${account.status}): check the auth id and token`,
    );
  if (account.status !== 200)
    throw new Error(
      `GET Account/${target.authId}/ answered ${account.status}: ${account.body.slice(0, 200)}`,
    );
  const metrics = await get('/metrics', true).catch((error: unknown) => ({
    status: 0,
    body: (error as Error).message,
  }));
  const cpuSeconds = metrics.status === 200 ? readSample(metrics.body, CPU_METRIC) : null;
  const cpu: TargetGateway['cpu'] =
    cpuSeconds !== null
      ? {
          from: 'metrics',
          detail: `${CPU_METRIC} from ${target.gatewayUrl}/metrics, read at the start and end of each step (the whole process, every thread; no per-thread split)`,
        }
      : {
          from: 'unavailable',
          detail:
            metrics.status === 200
              ? `unavailable: ${target.gatewayUrl}/metrics has no ${CPU_METRIC}`
              : `unavailable: GET ${target.gatewayUrl}/metrics ${metrics.status === 0 ? `failed: ${metrics.body}` : `answered ${metrics.status}`}`,
        };
  return {
    gateway: {
      baseUrl: target.gatewayUrl,
      sipHost: target.sip.host,
      sipPort: target.sip.port,
      authId: target.authId,
      authorization,
      usage: cpu.from === 'metrics' ? metricsUsage(target.gatewayUrl, authorization) : noUsage(),
      realtimePriority: () => null,
      log: null,
      exited: () => false,
      stop: () => Promise.resolve(),
    },
    cpu,
  };
}

/**
 * The gateway of a bench run: one `startLocal` starts here when no target is named, or the
 * target, checked; and how the results say where it was (null for a local one).
 */
export async function openBenchGateway(
  target: GatewayTarget | null,
  skipped: SkippedInTarget[],
  startLocal: () => Promise<CallsGateway>,
): Promise<{ gateway: CallsGateway; target: TargetRecord | null }> {
  if (!target) return { gateway: await startLocal(), target: null };
  const { gateway, cpu } = await connectTargetGateway(target);
  return { gateway, target: describeTarget(target, cpu, skipped) };
}
