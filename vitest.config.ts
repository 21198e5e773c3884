import { defineConfig } from 'vitest/config';

/**
 * Files whose assertions depend on timing that another test file on the second core would
 * disturb: killed and hung peers mid-burst, nodes judged alive by their heartbeats, Kamailio's
 * probes, real-time audio pacing and latency, real-time scheduling, valgrind. They run one at
 * a time once the rest is done; the rest runs two files at a time (one per core). Everything
 * one at a time took 16 minutes (19 with more tests on a busier machine); this split took
 * 13 minutes for 260 files.
 */
const SEQUENTIAL = [
  'test/integration/faults/**/*.test.ts',
  'test/integration/cluster/**/*.test.ts',
  'test/integration/kamailio/**/*.test.ts',
  'test/integration/state/**/*.test.ts',
  'test/integration/stream/**/*.test.ts',
  'test/integration/media/**/*.test.ts',
  'test/integration/native/**/*.test.ts',
  'test/integration/realtime-priority.test.ts',
  'test/integration/call/webrtc-call.test.ts',
  'test/integration/call/browser-phone-calls.test.ts',
  'test/integration/call/browser-ice-restart.test.ts',
];

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
          exclude: SEQUENTIAL,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...shared,
          name: 'sequential',
          include: SEQUENTIAL,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
