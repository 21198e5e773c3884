/**
 * Where callback retries wait until they are due. Jobs are plain JSON data: they must never
 * hold a secret, because the durable implementation writes them to Redis.
 */
export type RetryHandler<T> = (job: T) => Promise<void>;

export interface RetryQueue<T> {
  /**
   * Runs the handler with `job` after `delayMs`, even across a restart when durable. With an
   * `id`, a job of that id still waiting or running makes this one a no-op (the durable queue
   * keeps one job per id across every process on it).
   */
  schedule(job: T, delayMs: number, id?: string): Promise<void>;
  /** Starts handing due jobs to `handler`; called once. */
  start(handler: RetryHandler<T>): void;
  /** Stops taking jobs, waits for running handlers, releases timers and connections. */
  close(): Promise<void>;
}
