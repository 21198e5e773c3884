import { describe, expect, it } from 'vitest';
import { describeRunContext, type Machine } from '../../../bench/api/machine.js';
import { probeMachineSpeed } from '../../../bench/api/machine-speed.js';

describe('the machine speed probe', () => {
  it('times each of its workloads', () => {
    const speed = probeMachineSpeed(1);
    for (const figure of [speed.computeMs, speed.memoryMs, speed.syscallUs, speed.wakeupUs]) {
      expect(Number.isFinite(figure)).toBe(true);
      expect(figure).toBeGreaterThan(0);
    }
    // 2^24 loop rounds and 128 MiB of copying take real time on any machine this runs on.
    expect(speed.computeMs).toBeGreaterThan(1);
    expect(speed.memoryMs).toBeGreaterThan(1);
  });

  it('goes into the lines a report opens with, at the start and at the end', () => {
    const machine: Machine = {
      cpuModel: 'Test CPU',
      cores: 2,
      memoryGiB: 4,
      node: 'v20.0.0',
      os: 'Linux',
      loadAverage: [0.5, 0.4, 0.3],
      speed: { computeMs: 25, memoryMs: 19, syscallUs: 0.3, wakeupUs: 15 },
    };
    const lines = describeRunContext({
      machine,
      revision: { commit: 'abc', srcModified: false },
      loadAverageAfter: [1, 1, 1],
      speedAfter: { computeMs: 40, memoryMs: 30, syscallUs: 0.5, wakeupUs: 60 },
    });
    expect(lines).toContain(
      'speed at the start: compute 25 ms, memory 19 ms, syscall 0.3 µs, thread wake-up round trip 15 µs (lower is faster); ' +
        'at the end: compute 40 ms, memory 30 ms, syscall 0.5 µs, thread wake-up round trip 60 µs (lower is faster)',
    );
    expect(lines[0]).toBe('machine: Test CPU, 2 cores, 4 GiB, node v20.0.0, Linux');
  });
});
