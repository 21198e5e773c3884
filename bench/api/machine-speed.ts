import { closeSync, openSync, writeSync } from 'node:fs';

/**
 * How fast this machine was when a run started, from fixed workloads timed on one thread. A
 * shared virtual machine does not run at one speed: neighbours on the host take memory
 * bandwidth and cache, and the same build can need half again as much CPU for the same load an
 * hour later. Figures from runs whose probes differ are not comparable; ratios measured within
 * one run still are. Lower is faster; each figure is the best of its rounds, so a moment of
 * preemption does not count.
 */
export interface MachineSpeed {
  /** ms for a fixed integer loop (2^24 rounds of xorshift): the core's own speed. */
  computeMs: number;
  /** ms to copy 128 MiB in 64 MiB blocks, more than any cache holds: the memory bandwidth this VM got. */
  memoryMs: number;
  /** µs per write(2) of one byte to /dev/null: what a system call costs here. */
  syscallUs: number;
}

const ROUNDS = 5;
const LOOP_ROUNDS = 1 << 24;
const BLOCK_BYTES = 64 * 2 ** 20;
const COPY_BYTES = 128 * 2 ** 20;
const SYSCALLS = 20_000;

/** Runs the probe (about half a second) on the calling thread. */
export function probeMachineSpeed(rounds = ROUNDS): MachineSpeed {
  const source = Buffer.alloc(BLOCK_BYTES, 0x5a);
  const target = Buffer.alloc(BLOCK_BYTES);
  return {
    computeMs: round2(best(rounds, compute)),
    memoryMs: round2(best(rounds, () => copyMemory(source, target))),
    syscallUs: round2((best(rounds, writeDevNull) * 1000) / SYSCALLS),
  };
}

/** One line for a report: "compute 31.2 ms, memory 9.8 ms, syscall 0.61 µs". */
export function describeMachineSpeed(speed: MachineSpeed): string {
  return `compute ${speed.computeMs} ms, memory ${speed.memoryMs} ms, syscall ${speed.syscallUs} µs (lower is faster)`;
}

/** The work's results are kept, so the compiler cannot drop the work. */
const kept: number[] = [];

function best(rounds: number, work: () => unknown): number {
  let fastest = Infinity;
  kept.length = 0;
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    kept.push(Number(work()));
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - start) / 1e6);
  }
  return fastest;
}

function compute(): number {
  let x = 0x9e3779b9 | 0;
  for (let i = 0; i < LOOP_ROUNDS; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  return x;
}

function copyMemory(source: Buffer, target: Buffer): number {
  for (let copied = 0; copied < COPY_BYTES; copied += BLOCK_BYTES) {
    source.copy(target);
    source[0] = copied & 0xff;
  }
  return target[0] ?? 0;
}

function writeDevNull(): void {
  const fd = openSync('/dev/null', 'w');
  const byte = Buffer.from([0]);
  try {
    for (let i = 0; i < SYSCALLS; i++) writeSync(fd, byte);
  } finally {
    closeSync(fd);
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
