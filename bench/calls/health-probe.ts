import { Agent, get } from 'node:http';
import { performance } from 'node:perf_hooks';
import { percentiles } from './stats.js';

/**
 * GET /health on the gateway every 50 ms on a connection of its own: how long the answers take
 * shows how late the gateway's event loop runs (a stalled loop answers nothing, SIP included).
 */
export class HealthProbe {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  private readonly timer: NodeJS.Timeout;
  private latencies: number[] = [];
  private inFlight = false;

  constructor(baseUrl: string) {
    const url = new URL(`${baseUrl}/health`);
    this.timer = setInterval(() => {
      if (this.inFlight) return;
      this.inFlight = true;
      const started = performance.now();
      const req = get({
        agent: this.agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => {
          this.latencies.push(performance.now() - started);
          this.inFlight = false;
        });
      });
      req.on('error', () => {
        this.inFlight = false;
      });
    }, 50);
    this.timer.unref();
  }

  /** The answer times since the last call, ms. */
  take(): { p50: number | null; p99: number | null; max: number | null } {
    const taken = this.latencies;
    this.latencies = [];
    return percentiles(taken);
  }

  stop(): void {
    clearInterval(this.timer);
    this.agent.destroy();
  }
}
