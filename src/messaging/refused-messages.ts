import { LocalJournal } from '../state/local-journal.js';
import type { State } from '../state/state.js';

interface MessageRef {
  account: string;
  message_uuid: string;
}

/**
 * Messages whose send request was answered with an error (the store was away, or too slow)
 * after some of their writes were already on their way: a hung Redis still carries those out
 * once it wakes, and would leave a record, an outbox entry and a queued job behind for a
 * message the client was told was not taken. They are kept here (uuids only, in the local
 * journal) until their writes are withdrawn from the store, and never sent meanwhile.
 */
export class RefusedMessages {
  private readonly journal: LocalJournal<MessageRef>;

  constructor(
    private readonly state: State,
    journalPath: string | null,
  ) {
    this.journal = LocalJournal.open<MessageRef>(journalPath);
  }

  has(uuid: string): boolean {
    return this.journal.has(uuid);
  }

  refuse(refs: MessageRef[]): void {
    for (const ref of refs)
      this.journal.keep(ref.message_uuid, { account: ref.account, message_uuid: ref.message_uuid });
  }

  /** Removes a refused message's outbox entry and record, where the store has them. */
  async withdraw(uuid: string): Promise<void> {
    const ref = this.journal.get(uuid);
    if (!ref) return;
    const outbox = await this.state.outbox.get(ref.account, ref.message_uuid);
    if (outbox) await this.state.outbox.remove(outbox);
    const record = await this.state.messages.get(ref.account, ref.message_uuid);
    if (record) await this.state.messages.remove(record);
    this.journal.release(uuid);
  }

  /** Withdraws every refused message; resolves with how many it withdrew. */
  async withdrawAll(): Promise<number> {
    const uuids = this.journal.list().map(([uuid]) => uuid);
    for (const uuid of uuids) await this.withdraw(uuid);
    return uuids.length;
  }

  close(): void {
    this.journal.close();
  }
}
