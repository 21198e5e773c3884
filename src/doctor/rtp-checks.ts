import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Config, PortRange } from '../config/config.js';
import { fail, ok, warn, type CheckResult } from './check-result.js';

/**
 * RTP pairs each media worker keeps bound ahead of need (PAIRS_AHEAD in
 * src/media/worker/worker-sessions.ts; a unit test keeps the two equal). Not imported: that
 * module loads the native media addon, and the doctor must run where it is not built yet.
 */
export const PAIRS_BOUND_AHEAD = 32;
/** A call's legs at most: the caller's, and the one Dial or a trunk bridges it to. */
export const LEGS_PER_CALL = 2;
/** Calls one media worker carries with a core of its own (bench/README.md). */
export const CALLS_PER_WORKER = 400;

/** RFC 3550 11: RTP on an even port, RTCP on the odd one above it. */
export function rtpPairs(range: PortRange): number {
  const first = range.min + (range.min % 2);
  const last = range.max - 1 - ((range.max - 1) % 2);
  return last >= first ? (last - first) / 2 + 1 : 0;
}

/**
 * Each call leg holds one pair of VOXGATE_RTP_PORTS, and each worker keeps PAIRS_BOUND_AHEAD
 * more bound, so the range must hold both; ports the system hands out to outgoing connections
 * (ip_local_port_range) may be taken from under it.
 */
export function checkRtpRange(
  config: Config,
  expectedCalls: number,
  ephemeral: PortRange | null = systemEphemeralPorts(),
): CheckResult {
  const { rtpPorts, mediaWorkers } = config;
  const range = `VOXGATE_RTP_PORTS ${rtpPorts.min}-${rtpPorts.max}`;
  const pairs = rtpPairs(rtpPorts);
  const ahead = mediaWorkers * PAIRS_BOUND_AHEAD;
  const legs = expectedCalls * LEGS_PER_CALL;
  const need = `${plural(mediaWorkers, 'media worker')} keeping ${ahead} bound ahead and ${plural(expectedCalls, 'expected call')} of up to ${LEGS_PER_CALL} legs need ${ahead + legs}`;
  if (pairs < ahead + legs)
    return fail(
      'rtp-range',
      `${range} holds ${plural(pairs, 'RTP/RTCP port pair')}; ${need}: widen VOXGATE_RTP_PORTS ` +
        `(or lower VOXGATE_MEDIA_WORKERS or VOXGATE_EXPECTED_CALLS)`,
    );
  if (ephemeral && rtpPorts.min <= ephemeral.max && ephemeral.min <= rtpPorts.max)
    return warn(
      'rtp-range',
      `${range} overlaps the system's ports for outgoing connections (ip_local_port_range ` +
        `${ephemeral.min}-${ephemeral.max}), which may take RTP ports: move VOXGATE_RTP_PORTS ` +
        `out of it`,
    );
  return ok('rtp-range', `${range} holds ${plural(pairs, 'pair')}; ${need}`);
}

/** Media workers against the expected calls and the machine's cores. */
export function checkMediaWorkers(
  config: Config,
  expectedCalls: number,
  cores: number = availableParallelism(),
): CheckResult {
  const workers = config.mediaWorkers;
  const perWorker = Math.ceil(expectedCalls / workers);
  const carried = `${plural(expectedCalls, 'expected call')} on ${plural(workers, 'media worker')}`;
  if (perWorker > CALLS_PER_WORKER)
    return warn(
      'media-workers',
      `${carried} is ${perWorker} a worker; one carries about ${CALLS_PER_WORKER} ` +
        `(bench/README.md): raise VOXGATE_MEDIA_WORKERS (and the cores under it)`,
    );
  if (workers > cores)
    return warn(
      'media-workers',
      `VOXGATE_MEDIA_WORKERS is ${workers} on ${plural(cores, 'core')}: workers share cores ` +
        `and their 20 ms ticks run late; lower it to ${Math.max(1, cores - 1)}`,
    );
  return ok('media-workers', `${carried} (${perWorker} a worker, ${plural(cores, 'core')})`);
}

function systemEphemeralPorts(): PortRange | null {
  try {
    const [min, max] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    return min && max ? { min, max } : null;
  } catch {
    return null;
  }
}

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
