import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { threadScheduling as scheduling } from '../support/thread-scheduling.js';

const SCHED_OTHER = 0;
const SCHED_RR = 2;

function threadsOf(pid: number): { policy: number; priority: number }[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      return [scheduling(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1'))];
    } catch {
      return []; // ended while being read
    }
  });
}

/** Whether this machine lets a process ask for SCHED_RR (root, CAP_SYS_NICE or RLIMIT_RTPRIO). */
const canRealtime =
  process.platform === 'linux' && spawnSync('chrt', ['-r', '1', 'true']).status === 0;

/** Runs a command without the right to real-time scheduling, whoever runs the tests. */
const withoutRealtime = [
  ...(process.getuid?.() === 0 ? ['setpriv', '--bounding-set', '-sys_nice'] : []),
  'prlimit',
  '--rtprio=0',
];

describe('VOXGATE_REALTIME_PRIORITY', () => {
  const started: GatewayProcess[] = [];
  afterEach(async () => {
    for (const p of started.splice(0)) await p.stop();
  });

  it.skipIf(!canRealtime)('puts every thread of the gateway under SCHED_RR', async () => {
    const gateway = await spawnGateway({ VOXGATE_DATA_DIR: '', VOXGATE_REALTIME_PRIORITY: '7' });
    started.push(gateway);
    await gateway.healthy();
    const threads = threadsOf(gateway.child.pid!);
    expect(threads.length).toBeGreaterThan(3);
    expect(threads).toEqual(threads.map(() => ({ policy: SCHED_RR, priority: 7 })));
    expect(gateway.stdout()).toMatch(
      /"priority":7,"threads":\d+.*real-time scheduling \(SCHED_RR\) on/,
    );
  });

  it.skipIf(!canRealtime)('reaches threads started afterwards, such as a worker', () => {
    const script = `
      import { Worker } from 'node:worker_threads';
      import { applyRealtimePriority } from './src/realtime-priority.ts';
      const outcome = applyRealtimePriority(9);
      const worker = new Worker(
        "const { readFileSync } = require('node:fs'); const { parentPort } = require('node:worker_threads');" +
          "parentPort.postMessage(readFileSync('/proc/thread-self/stat', 'latin1'));",
        { eval: true, execArgv: [] },
      );
      worker.once('message', (stat) => {
        console.log(JSON.stringify({ outcome, worker: stat }));
        void worker.terminate();
      });
    `;
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(run.stderr).toBe('');
    const { outcome, worker } = JSON.parse(run.stdout) as { outcome: unknown; worker: string };
    expect(outcome).toMatchObject({ applied: true, priority: 9 });
    expect(scheduling(worker)).toEqual({ policy: SCHED_RR, priority: 9 });
  });

  it('starts at normal priority when the system refuses, and logs why', async () => {
    const gateway = await spawnGateway(
      { VOXGATE_DATA_DIR: '', VOXGATE_REALTIME_PRIORITY: '7' },
      withoutRealtime,
    );
    started.push(gateway);
    await gateway.healthy();
    const threads = threadsOf(gateway.child.pid!);
    expect(threads).toEqual(threads.map(() => ({ policy: SCHED_OTHER, priority: 0 })));
    const warning = gateway
      .stdout()
      .split('\n')
      .find((line) => line.includes('VOXGATE_REALTIME_PRIORITY could not be applied'));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({
      level: 40,
      priority: 7,
      reason:
        'sched_setscheduler: Operation not permitted; it needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least 7',
    });
  });
  /** A cgroup v1 cpu group of its own, which starts with no real-time time (as a container's). */
  const CPU_CGROUP = '/sys/fs/cgroup/cpu';
  const canMakeCgroup =
    process.getuid?.() === 0 && existsSync(`${CPU_CGROUP}/cpu.rt_runtime_us`) && canRealtime;

  it.skipIf(!canMakeCgroup)(
    'says when its control group allows no real-time time, as in a container',
    async () => {
      const group = `${CPU_CGROUP}/voxgate-rt-test-${process.pid}`;
      mkdirSync(group);
      let gateway: GatewayProcess | undefined;
      try {
        expect(readFileSync(`${group}/cpu.rt_runtime_us`, 'utf8').trim()).toBe('0');
        gateway = await spawnGateway({ VOXGATE_DATA_DIR: '', VOXGATE_REALTIME_PRIORITY: '7' }, [
          'sh',
          '-c',
          `echo $$ > ${group}/cgroup.procs && exec "$@"`,
          'sh',
        ]);
        await gateway.healthy();
        const warning = gateway
          .stdout()
          .split('\n')
          .find((line) => line.includes('VOXGATE_REALTIME_PRIORITY could not be applied'));
        expect(JSON.parse(warning!)).toMatchObject({
          priority: 7,
          reason:
            "sched_setscheduler: Operation not permitted; this process's control group allows no real-time time (cpu.rt_runtime_us is 0): in a container, give it a budget (docker run --cpu-rt-runtime, with the daemon's --cpu-rt-runtime)",
        });
      } finally {
        // The group can go only once its process has.
        await gateway?.stop();
        rmdirSync(group);
      }
    },
  );
});
