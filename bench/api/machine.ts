import { readFileSync } from 'node:fs';
import os from 'node:os';

/** The machine a run measured, recorded with its figures so they can be compared honestly. */
export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  os: string;
  /** 1, 5 and 15 minute load averages when the run started: other work on the box skews figures. */
  loadAverage: number[];
}

export function describeMachine(): Machine {
  return {
    cpuModel: cpuModel(),
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
  };
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
