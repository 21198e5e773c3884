import { readFileSync } from 'node:fs';
import os from 'node:os';
import { describeMachineSpeed, probeMachineSpeed, type MachineSpeed } from './machine-speed.js';
import type { Revision } from './revision.js';

/** The machine a run measured, recorded with its figures so they can be compared honestly. */
export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  os: string;
  /** 1, 5 and 15 minute load averages when the run started: other work on the box skews figures. */
  loadAverage: number[];
  /** How fast the machine was when the run started (a shared VM's speed varies). */
  speed: MachineSpeed;
}

/** What every run records besides its figures, to say what they were measured on. */
export interface RunContext {
  machine: Machine;
  revision: Revision;
  loadAverageAfter: number[];
  /** The speed probe again at the end, for runs long enough for the machine to change. */
  speedAfter?: MachineSpeed;
}

export function describeMachine(): Machine {
  return {
    cpuModel: cpuModel(),
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
    speed: probeMachineSpeed(),
  };
}

/** The lines a report opens with: the machine and its speed, the code, the load. */
export function describeRunContext(run: RunContext): string[] {
  const m = run.machine;
  const speed = `speed at the start: ${describeMachineSpeed(m.speed)}`;
  return [
    `machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, node ${m.node}, ${m.os}`,
    run.speedAfter ? `${speed}; at the end: ${describeMachineSpeed(run.speedAfter)}` : speed,
    `code: ${run.revision.commit}${run.revision.srcModified ? ' with uncommitted changes in src/' : ''}`,
    `load average before ${m.loadAverage.join(' ')}, after ${run.loadAverageAfter.join(' ')}`,
  ];
}

function cpuModel(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1]) return match[1].trim();
  } catch {
    // not Linux
  }
  return os.cpus()[0]?.model ?? 'unknown';
}
