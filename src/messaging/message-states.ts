import type { CallbackDelivery } from '../callbacks/index.js';
import type { MessageRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import { logMessageState, type MessageLog } from './message-log.js';
import { statusCallback } from './status-callback.js';

/** A message's record moving on: each change of state is written, then told to the client. */
export class MessageStates {
  constructor(
    private readonly state: State,
    private readonly callbacks: CallbackDelivery,
    private readonly log: MessageLog,
    /** Closing: no new status callback goes out. */
    private readonly closed: () => boolean,
  ) {}

  /** Writes a change of state and sends its status callback (Sequence counts per message). */
  async save(next: MessageRecord, current: MessageRecord): Promise<MessageRecord> {
    const changed = next.message_state !== current.message_state;
    const record = changed ? { ...next, callback_sequence: current.callback_sequence + 1 } : next;
    await this.state.messages.update(record, current);
    if (changed) {
      logMessageState(this.log, record);
      this.sendStatus(record);
    }
    return record;
  }

  /** A message just accepted (queued): its line, and its status callback. */
  accepted(record: MessageRecord): void {
    logMessageState(this.log, record);
    this.sendStatus(record);
  }

  sendStatus(record: MessageRecord): void {
    if (this.closed()) return;
    const request = statusCallback(record, record.callback_sequence);
    if (!request) return;
    this.callbacks.send(request).catch((error: Error) => {
      this.log.warn(
        { message_uuid: record.message_uuid, err: error.message },
        'status callback not sent',
      );
    });
  }
}
