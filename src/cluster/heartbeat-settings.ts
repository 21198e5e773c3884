import { SettingError } from '../core/setting-error.js';
/**
 * The timing of the nodes' heartbeats, read once at start (config/config.ts reads the
 * environment through this; docs/configuration.md, "State and cluster"):
 *
 * - `VOXGATE_NODE_HEARTBEAT_MS`: how often a node writes its heartbeat to Redis (1000). Each
 *   beat also gives its calls' keys and its conference rooms' claims their time again, and
 *   each node looks for dead nodes as often.
 * - `VOXGATE_NODE_TTL_MS`: how long a node may go without a heartbeat before the others take it
 *   for dead and close what it left (3000), at least twice the heartbeat interval. Shorter
 *   finds a dead node sooner; but a node whose process stands still for longer than this less
 *   a beat (a long garbage collection, a starved machine) is taken for dead while it lives,
 *   and its calls are closed under it.
 *
 * Every node of a cluster should have the same values: each judges the others by its own.
 */
export interface HeartbeatSettings {
  /** ms from one heartbeat of a node to its next. */
  intervalMs: number;
  /** ms without a heartbeat after which a node is dead. */
  nodeTtlMs: number;
}

export const DEFAULT_HEARTBEAT_SETTINGS: HeartbeatSettings = { intervalMs: 1000, nodeTtlMs: 3000 };

/**
 * Below a quarter second a beat's own round trip to Redis may take longer than the interval,
 * which the registry reads as Redis holding the beats up: such a node would never judge
 * another dead. Below a second of time to live a garbage collection makes a node dead. Above
 * a minute between beats, or ten without one, a dead node's calls run on unclosed for so long
 * that the figure is a typo.
 */
const INTERVAL_RANGE = { min: 250, max: 60_000 };
const TTL_RANGE = { min: 1000, max: 600_000 };
/**
 * The time to live spans two beats at least: a single beat that comes late (Redis slow to
 * answer, the process busy) must not make a live node dead.
 */
const MIN_BEATS_PER_TTL = 2;

type Env = Record<string, string | undefined>;

export function readHeartbeatSettings(env: Env): HeartbeatSettings {
  const intervalMs = milliseconds(
    env,
    'VOXGATE_NODE_HEARTBEAT_MS',
    DEFAULT_HEARTBEAT_SETTINGS.intervalMs,
    INTERVAL_RANGE,
  );
  const nodeTtlMs = milliseconds(
    env,
    'VOXGATE_NODE_TTL_MS',
    DEFAULT_HEARTBEAT_SETTINGS.nodeTtlMs,
    TTL_RANGE,
  );
  if (nodeTtlMs < MIN_BEATS_PER_TTL * intervalMs) {
    // The variable the operator set is the one named: a heartbeat slowed alone past the
    // default time to live says so, rather than blaming a time to live nobody gave.
    if (env.VOXGATE_NODE_TTL_MS === undefined || env.VOXGATE_NODE_TTL_MS === '') {
      throw new SettingError(
        'VOXGATE_NODE_HEARTBEAT_MS',
        `must be at most half of VOXGATE_NODE_TTL_MS (${nodeTtlMs}, its default): set that to twice this or more`,
        env.VOXGATE_NODE_HEARTBEAT_MS ?? '',
      );
    }
    throw new SettingError(
      'VOXGATE_NODE_TTL_MS',
      `must be at least twice VOXGATE_NODE_HEARTBEAT_MS (${intervalMs}): one late beat must not make a live node dead`,
      env.VOXGATE_NODE_TTL_MS ?? '',
    );
  }
  return { intervalMs, nodeTtlMs };
}

/** A whole number of ms within `range`, both ends included; `fallback` when unset or empty. */
function milliseconds(
  env: Env,
  variable: string,
  fallback: number,
  range: { min: number; max: number },
): number {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < range.min || Number(raw) > range.max) {
    throw new SettingError(
      variable,
      `must be a whole number of milliseconds from ${range.min} to ${range.max}`,
      raw,
    );
  }
  return Number(raw);
}
