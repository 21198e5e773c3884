import { closeSync, openSync, writeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/**
 * How fast this machine was when a run started, from fixed workloads timed on one thread. A
 * shared virtual machine does not run at one speed: neighbours on the host take memory
 * bandwidth and cache, and the same build can need half again as much CPU for the same load an
 * hour later. Figures from runs whose probes differ are not comparable; ratios measured within
 * one run still are. Lower is faster; each figure is the median of its rounds, so one moment
 * of preemption does not count.
 */
export interface MachineSpeed {
  /** ms for a fixed integer loop (2^24 rounds of xorshift): the core's own speed. */
  computeMs: number;
  /** ms to copy 128 MiB in 64 MiB blocks, more than any cache holds: the memory bandwidth this VM got. */
  memoryMs: number;
  /** µs per write(2) of one byte to /dev/null: what a system call costs here. */
  syscallUs: number;
  /**
   * µs for one thread to wake another and be woken back (futex): what handing a packet or a
   * message to another thread or process costs on this VM, where waking an idle virtual CPU
   * goes through the hypervisor.
   */
  wakeupUs: number;
}

const ROUNDS = 5;
const LOOP_ROUNDS = 1 << 24;
const BLOCK_BYTES = 64 * 2 ** 20;
const COPY_BYTES = 128 * 2 ** 20;
const SYSCALLS = 20_000;
const WAKEUPS = 1_000;

/** Runs the probe (about half a second) on the calling thread. */
export function probeMachineSpeed(rounds = ROUNDS): MachineSpeed {
  const source = Buffer.alloc(BLOCK_BYTES, 0x5a);
  const target = Buffer.alloc(BLOCK_BYTES);
  return {
    computeMs: round2(median(rounds, compute)),
    memoryMs: round2(median(rounds, () => copyMemory(source, target))),
    syscallUs: round2((median(rounds, writeDevNull) * 1000) / SYSCALLS),
    wakeupUs: round2((pingPong(rounds) * 1000) / WAKEUPS),
  };
}

/** One line for a report: "compute 25 ms, memory 19 ms, syscall 0.3 µs, wake-up 15 µs". */
export function describeMachineSpeed(speed: MachineSpeed): string {
  return `compute ${speed.computeMs} ms, memory ${speed.memoryMs} ms, syscall ${speed.syscallUs} µs, thread wake-up round trip ${speed.wakeupUs} µs (lower is faster)`;
}

/** The work's results are kept, so the compiler cannot drop the work. */
const kept: number[] = [];

/** The median time of the rounds of `work`, in ms. */
function median(rounds: number, work: () => unknown): number {
  const times: number[] = [];
  kept.length = 0;
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    kept.push(Number(work()));
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? NaN;
}

/**
 * A helper thread bounces a counter back: slot 0 is the counter (negative stops the helper),
 * slot 1 says the helper is up.
 */
const BOUNCER = `
const { workerData } = require('node:worker_threads');
const cells = new Int32Array(workerData);
Atomics.store(cells, 1, 1);
Atomics.notify(cells, 1);
for (let seen = 0; ; ) {
  Atomics.wait(cells, 0, seen);
  const value = Atomics.load(cells, 0);
  if (value < 0) break;
  seen = value + 1;
  Atomics.store(cells, 0, seen);
  Atomics.notify(cells, 0);
}`;

/** The median ms of `rounds` rounds of WAKEUPS round trips to a helper thread. */
function pingPong(rounds: number): number {
  const cells = new Int32Array(new SharedArrayBuffer(8));
  const helper = new Worker(BOUNCER, { eval: true, workerData: cells.buffer });
  helper.unref();
  try {
    if (Atomics.wait(cells, 1, 0, 10_000) === 'timed-out') return NaN;
    return median(rounds, () => {
      for (let i = 0; i < WAKEUPS; i++) {
        const sent = Atomics.load(cells, 0) + 1;
        Atomics.store(cells, 0, sent);
        Atomics.notify(cells, 0);
        Atomics.wait(cells, 0, sent);
      }
    });
  } finally {
    Atomics.store(cells, 0, -1);
    Atomics.notify(cells, 0);
  }
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
