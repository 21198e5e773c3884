import { readdirSync, readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/**
 * Files whose assertions depend on timing that another test file on the second core would
 * disturb: killed and hung peers mid-burst, nodes judged alive by their heartbeats, Kamailio's
 * probes, real-time audio pacing and latency, real-time scheduling, a hundred workers
 * terminated at once. They run one at a time once the rest is done; the rest runs two files at
 * a time (one per core). Everything one at a time took 16 minutes (19 with more tests on a
 * busier machine); this split took 13 minutes for 260 files, and 16 for 315; sharing processes
 * (OWN_PROCESS) brought that to 14. The addon's valgrind run (native/leak-check) asserts no
 * timing and keeps to one core, as any file beside another does: it runs with the rest.
 */
const SEQUENTIAL = [
  'test/integration/faults/**/*.test.ts',
  'test/integration/cluster/**/*.test.ts',
  'test/integration/kamailio/**/*.test.ts',
  'test/integration/state/**/*.test.ts',
  'test/integration/stream/**/*.test.ts',
  'test/integration/media/**/*.test.ts',
  'test/integration/native/worker-terminate.test.ts',
  'test/integration/realtime-priority.test.ts',
  'test/integration/call/webrtc-call.test.ts',
  'test/integration/call/browser-phone-calls.test.ts',
  'test/integration/call/browser-ice-restart.test.ts',
  'test/integration/call/browser-tabs-ring.test.ts',
  'test/integration/call/firefox-calls.test.ts',
  'test/integration/call/jssip-calls.test.ts',
  'test/integration/call/mixed-kind-ring.test.ts',
];

/**
 * Integration files that replace a module or change the process for their own tests (vi.mock,
 * fake timers, stubbed globals or environment): they get a process of their own. Every other
 * integration file shares its process with the files run before it on its core: starting a
 * process a file took about 1.5 s, 160 s of the suite. They can share because each one stops
 * what it starts (gateways, servers, listeners, handlers) and changes nothing else of the
 * process. Found by reading the files, so that a new one cannot be forgotten here.
 */
const OWN_PROCESS = readdirSync('test/integration', { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => `test/integration/${file}`)
  .filter((file) =>
    /\bvi\.(mock|doMock|useFakeTimers|stubEnv|stubGlobal)\(/.test(readFileSync(file, 'utf8')),
  );

const shared = { testTimeout: 30_000, hookTimeout: 30_000, pool: 'forks' as const };

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          maxWorkers: 2,
          // Unit tests start no servers and touch no process-wide state (no mocks, stubs, fake
          // timers or environment changes): they share two processes instead of starting one
          // each, which took longer than their tests (152 files, 34 s of tests, 230 s of starts).
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'parallel',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...SEQUENTIAL, ...OWN_PROCESS],
          maxWorkers: 2,
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...shared,
          name: 'own-process',
          include: OWN_PROCESS,
          // The same as the files it runs beside, as vitest asks of projects run together.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...shared,
          name: 'sequential',
          include: SEQUENTIAL,
          exclude: OWN_PROCESS,
          maxWorkers: 1,
          isolate: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
