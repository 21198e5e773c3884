import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A media worker is a thread of the gateway: when one is terminated (the pool replacing it,
 * shutdown) while it is inside the addon, whatever the addon then throws has nowhere to go, and
 * must not abort the whole process with the calls of every other worker. A child process (so
 * that an abort fails this test, not the test runner) terminates, a hundred times over, a
 * worker that calls the addon without pause, each at a random moment.
 */
const ADDON = fileURLToPath(
  new URL('../../../native/build/Release/voxgate_native.node', import.meta.url),
);

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const addon = require(workerData);
const resampler = new addon.Resampler(8000, 16000, 3);
const frame = new Int16Array(160);
parentPort.postMessage('ready');
for (;;) resampler.process(frame);
`;

const MAIN = `
const { Worker } = require('node:worker_threads');
const { once } = require('node:events');
(async () => {
  for (let i = 0; i < 100; i++) {
    const worker = new Worker(${JSON.stringify(WORKER)}, { eval: true, workerData: process.argv[1] });
    await once(worker, 'message');
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
    await worker.terminate();
  }
  console.log('terminated 100 workers busy in the addon');
})();
`;

describe('a worker terminated while in the addon', () => {
  it('ends alone: the process it belongs to goes on', () => {
    const run = spawnSync(process.execPath, ['-e', MAIN, ADDON], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (run.error) throw run.error;
    expect(run.stderr).not.toMatch(/terminate called|FATAL ERROR/);
    expect(run.stdout).toContain('terminated 100 workers busy in the addon');
    expect(run.status).toBe(0);
  }, 90_000);
});
