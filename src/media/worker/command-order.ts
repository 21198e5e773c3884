import type { Command, Results } from './protocol.js';

type Result = Results[Command['type']];

interface Queued {
  command: Command;
  resolve(result: Promise<Result>): void;
}

/**
 * The order a worker runs its commands in. Commands come in batches (MessageBatch) and start
 * in order, each as soon as it is read, except that one naming a session still being opened
 * (by an earlier command, maybe of the same batch) waits for that open to settle, as it would
 * have had it come alone; the commands behind a waiting one wait their turn after it.
 */
export class CommandOrder {
  /** Sessions being opened: each settles once its open has succeeded or failed. */
  private readonly opening = new Map<string, Promise<void>>();
  /** Commands not started yet, in order: the first waits for an open. */
  private readonly queue: Queued[] = [];

  constructor(private readonly run: (command: Command) => Promise<Result>) {}

  handle(command: Command): Promise<Result> {
    return new Promise<Result>((resolve) => {
      this.queue.push({ command, resolve });
      if (this.queue.length === 1) this.startQueued();
    });
  }

  /** Starts the queued commands in order, up to one that must wait for an open. */
  private startQueued(): void {
    while (this.queue.length > 0) {
      const next = this.queue[0] as Queued;
      const opens = this.opensNamedBy(next.command);
      if (opens.length > 0) {
        void Promise.all(opens).then(() => this.startQueued());
        return;
      }
      this.queue.shift();
      next.resolve(this.start(next.command));
    }
  }

  private opensNamedBy(command: Command): Promise<void>[] {
    if (command.type === 'createSession' || !('sessionId' in command)) return [];
    const named =
      command.type === 'bridge' ? [command.sessionId, command.peerId] : [command.sessionId];
    return named.flatMap((id) => this.opening.get(id) ?? []);
  }

  private start(command: Command): Promise<Result> {
    const result = this.run(command);
    if (command.type === 'createSession') {
      const { sessionId } = command;
      const settled = result.then(
        () => undefined,
        () => undefined,
      );
      this.opening.set(sessionId, settled);
      void settled.then(() => {
        if (this.opening.get(sessionId) === settled) this.opening.delete(sessionId);
      });
    }
    return result;
  }
}
