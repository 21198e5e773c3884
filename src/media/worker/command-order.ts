import type { Command, Results } from './protocol.js';

/**
 * The order a worker runs its commands in. Commands come in batches (MessageBatch) and start
 * in order, each as soon as it is read, except that one naming a session still being opened
 * (by an earlier command of its batch) waits for that open to settle, as it would have had it
 * come alone; the commands behind a waiting one wait their turn after it.
 */
export class CommandOrder {
  /** Sessions being opened: each settles once its open has succeeded or failed. */
  private readonly opening = new Map<string, Promise<void>>();
  /** The turn the last waiting command waits for; null when none waits. */
  private waiting: Promise<unknown> | null = null;

  constructor(private readonly run: (command: Command) => Promise<Results[Command['type']]>) {}

  handle(command: Command): Promise<Results[Command['type']]> {
    const named =
      'sessionId' in command && command.type !== 'createSession' ? [command.sessionId] : [];
    if (command.type === 'bridge') named.push(command.peerId);
    const opens = named.flatMap((id) => this.opening.get(id) ?? []);
    if (this.waiting === null && opens.length === 0) return this.start(command);
    const turn = Promise.all([this.waiting, ...opens]);
    this.waiting = turn;
    return turn.then(() => {
      if (this.waiting === turn) this.waiting = null;
      return this.start(command);
    });
  }

  private start(command: Command): Promise<Results[Command['type']]> {
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
