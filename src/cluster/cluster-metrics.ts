import { Gauge, type Registry } from 'prom-client';
import type { GatewayCluster } from './gateway-cluster.js';

/** `/metrics`: the live nodes this node sees, by state (itself included). */
export function clusterMetrics(registry: Registry, cluster: GatewayCluster): void {
  new Gauge({
    name: 'voxgate_cluster_nodes',
    help: 'Gateway nodes with a recent heartbeat, by state, this one included',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const nodes = await cluster.peers().catch(() => []);
      this.reset();
      for (const state of ['active', 'draining'] as const)
        this.set({ state }, nodes.filter((n) => n.state === state).length);
    },
  });
}
