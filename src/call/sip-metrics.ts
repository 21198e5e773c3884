import { Counter, Gauge, type Registry } from 'prom-client';
import type { SipMetrics } from '../sip/transaction/sip-metrics.js';
import { KNOWN_METHODS } from '../sip/ua/methods.js';
import type { TransactionLayer } from '../sip/transaction/transaction-layer.js';

/** The SIP stack's counters as Prometheus series, and its live transactions as a gauge. */
export function prometheusSipMetrics(registry: Registry): {
  metrics: SipMetrics;
  watch(transactions: TransactionLayer): void;
} {
  const requests = new Counter({
    name: 'voxgate_sip_requests_total',
    help: 'SIP requests by direction (in, out) and method, retransmissions excluded',
    labelNames: ['direction', 'method'],
    registers: [registry],
  });
  const responses = new Counter({
    name: 'voxgate_sip_responses_total',
    help: 'SIP responses by direction (in, out), the method they answer, and status',
    labelNames: ['direction', 'method', 'status'],
    registers: [registry],
  });
  const retransmissions = new Counter({
    name: 'voxgate_sip_retransmissions_total',
    help: 'SIP retransmissions sent (out) and received and absorbed (in), by method',
    labelNames: ['direction', 'method'],
    registers: [registry],
  });
  let layer: TransactionLayer | null = null;
  new Gauge({
    name: 'voxgate_sip_transactions',
    help: 'Live SIP transactions by side (server, client)',
    labelNames: ['side'],
    registers: [registry],
    collect() {
      this.set({ side: 'server' }, layer?.liveServerTransactions ?? 0);
      this.set({ side: 'client' }, layer?.liveClientTransactions ?? 0);
    },
  });
  return {
    metrics: {
      requestReceived: (method) => requests.inc({ direction: 'in', method: label(method) }),
      requestSent: (method) => requests.inc({ direction: 'out', method: label(method) }),
      responseReceived: (method, status) =>
        responses.inc({ direction: 'in', method: label(method), status }),
      responseSent: (method, status) =>
        responses.inc({ direction: 'out', method: label(method), status }),
      retransmissionSent: (method) =>
        retransmissions.inc({ direction: 'out', method: label(method) }),
      retransmissionReceived: (method) =>
        retransmissions.inc({ direction: 'in', method: label(method) }),
    },
    watch: (transactions) => {
      layer = transactions;
    },
  };
}

/** Methods are tokens anyone can invent: keep the label set bounded. */
const label = (method: string): string =>
  KNOWN_METHODS.has(method) || method === '2xx' ? method : 'other';
