import type { HeartbeatSettings } from '../../src/cluster/heartbeat-settings.js';

/**
 * The heartbeat timing of the nodes of the cluster tests that wait for it (a node found dead, a
 * key's time to live, a beat that restores what Redis lost): twice as fast as the defaults, so
 * that each such wait is shorter. Not faster: a node is taken for dead once its process stands
 * still for longer than the time to live less a beat (1.5 s here), and the test process stands
 * still for 250-400 ms whenever it builds a gateway beside the nodes it already runs; a node
 * falsely found dead would have its calls closed under it.
 */
export const TEST_HEARTBEAT: HeartbeatSettings = { intervalMs: 500, nodeTtlMs: 2000 };

/** TEST_HEARTBEAT as the environment of a node, in this process or in its own. */
export const TEST_HEARTBEAT_ENV: Record<string, string> = {
  VOXGATE_NODE_HEARTBEAT_MS: String(TEST_HEARTBEAT.intervalMs),
  VOXGATE_NODE_TTL_MS: String(TEST_HEARTBEAT.nodeTtlMs),
};
