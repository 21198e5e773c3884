import { describe, expect, it } from 'vitest';
import { TimerRetryQueue } from '../../../src/callbacks/timer-retry-queue.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('TimerRetryQueue', () => {
  it('hands a copy of the job to the handler once due', async () => {
    const queue = new TimerRetryQueue<{ n: number[] }>();
    const seen: Array<{ n: number[] }> = [];
    queue.start(async (job) => void seen.push(job));
    const job = { n: [1] };
    await queue.schedule(job, 20);
    job.n.push(2);
    await sleep(60);
    expect(seen).toEqual([{ n: [1] }]);
    await queue.close();
  });

  it('keeps jobs that fall due before start', async () => {
    const queue = new TimerRetryQueue<string>();
    await queue.schedule('early', 0);
    await sleep(20);
    const seen: string[] = [];
    queue.start(async (job) => void seen.push(job));
    await sleep(0);
    expect(seen).toEqual(['early']);
    await queue.close();
  });

  it('drops pending jobs on close and waits for a running handler', async () => {
    const queue = new TimerRetryQueue<string>();
    const done: string[] = [];
    queue.start(async (job) => {
      await sleep(50);
      done.push(job);
    });
    await queue.schedule('running', 0);
    await queue.schedule('pending', 10_000);
    await sleep(10);
    await queue.close();
    expect(done).toEqual(['running']);
    await expect(queue.schedule('late', 0)).rejects.toThrow(/closed/);
  });
});
