import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One file at a time (vitest's default on two cores: one fewer than the cores). Two at a
    // time took the suite from 16 to 9 minutes, but the Kamailio failover test and timing of
    // the node registry's judgements then failed under the shared load.
    maxWorkers: 1,
  },
});
