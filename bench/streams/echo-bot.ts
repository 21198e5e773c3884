import { Worker } from 'node:worker_threads';
import { workerScript } from '../../src/core/worker-script.js';

/** What the echo bot counted since it started (loop utilization: since the last read, %). */
export interface EchoBotCounters {
  /** WebSocket connections the gateway opened, and how many are open now. */
  connections: number;
  open: number;
  starts: number;
  stops: number;
  /** Media events, and those whose payload was not silence (the callers' numbered frames). */
  media: number;
  audioMedia: number;
  playAudioSent: number;
  /** Messages skipped per socket (`sequenceNumber`) and per track (`chunk`). */
  sequenceGaps: number;
  chunkGaps: number;
  outOfOrder: number;
  badMessages: number;
  sendErrors: number;
  maxBufferedBytes: number;
  /** Share of the bot thread's time spent running, not waiting, since the last read. */
  loopUtilization: number;
}

export type EchoBotMessage =
  { type: 'listening'; port: number } | { type: 'counters'; counters: EchoBotCounters };

export interface EchoBot {
  url: string;
  read(): Promise<EchoBotCounters>;
  stop(): Promise<void>;
}

/** Loaded through tsx, as the benchmark itself is. */
const ENTRY = new URL('./echo-bot-worker.ts', import.meta.url);

/** Starts the echo bot on a worker thread; resolves once it listens on a port of `host`. */
export async function startEchoBot(host = '127.0.0.1'): Promise<EchoBot> {
  const worker = new Worker(workerScript(ENTRY), { workerData: { host } });
  let pending: ((counters: EchoBotCounters) => void)[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: EchoBotMessage) => {
      if (message.type === 'listening') resolve(message.port);
      else for (const wake of pending.splice(0)) wake(message.counters);
    });
  });
  const exit = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    url: `ws://${host}:${port}/echo`,
    read: () =>
      new Promise<EchoBotCounters>((resolve) => {
        pending.push(resolve);
        worker.postMessage({ type: 'read' });
      }),
    stop: async () => {
      pending = [];
      worker.postMessage({ type: 'close' });
      const timer = setTimeout(() => void worker.terminate(), 3000);
      await exit;
      clearTimeout(timer);
    },
  };
}
