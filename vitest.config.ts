import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most test files wait on peers, timers and sockets rather than compute: two at a time on
    // the two cores (vitest's default is one fewer than the cores) takes the suite from about
    // 16 minutes to about 10.
    maxWorkers: 2,
  },
});
