import {
  SmscServer,
  ESME,
  readSubmit,
  type BindType,
  type PduObject,
  type ReceiptStat,
  type ReceivedSubmit,
  type Session,
  type SmscServerOptions,
} from '../../examples/lib/smsc-server.js';
import { until } from './wait.js';

export type { ReceiptStat, ReceivedSubmit } from '../../examples/lib/smsc-server.js';

export interface SmscOptions extends SmscServerOptions {
  /** Sends a receipt for each accepted part at once, with this stat (off when null). */
  autoReceipt?: ReceiptStat | null;
  /** Receipt style: TLVs and text (default), text only, or TLVs only. */
  receiptStyle?: 'both' | 'text' | 'tlv';
  /** With autoReceipt: the receipt goes out before the submit_sm_resp, as some SMSCs do. */
  receiptFirst?: boolean;
}

/** Fixed receipt dates, so that what a test reads back does not depend on the minute. */
const RECEIPT_DATES = { submitDate: '2611241200', doneDate: '2611241201' };

/**
 * An SMSC on 127.0.0.1 and a random port (the SMSC of `npm run smsc` underneath): it checks
 * the credentials, answers submit_sm with ids, records what it received, sends receipts and
 * inbound messages, and misbehaves on demand (throttling, held answers, dropped connections,
 * "already bound", malformed PDUs). A message counts as accepted only once its answer is sent.
 */
export class SmscSimulator extends SmscServer {
  readonly submits: ReceivedSubmit[] = [];
  enquireLinks = 0;
  /** Every PDU the sessions sent back after sendRaw (generic_nack...), in order. */
  readonly answers: PduObject[] = [];
  private throttle = 0;
  private alreadyBound = 0;
  private held: (() => void)[] | null = null;
  private killedPort: number | null = null;
  private readonly options: Required<Omit<SmscOptions, keyof SmscServerOptions>>;

  private constructor(options: SmscOptions) {
    super({ smscId: 'simulator', ...options });
    this.options = { autoReceipt: null, receiptStyle: 'both', receiptFirst: false, ...options };
  }

  static async start(options: SmscOptions = {}): Promise<SmscSimulator> {
    const simulator = new SmscSimulator(options);
    await simulator.listen(0, '127.0.0.1');
    return simulator;
  }

  override get port(): number {
    return this.killedPort ?? super.port;
  }

  /** Answers the next `count` submits ESME_RTHROTTLED. */
  throttleNext(count: number): void {
    this.throttle += count;
  }

  /** Answers the next `count` binds ESME_RALYBND. */
  alreadyBoundNext(count: number): void {
    this.alreadyBound += count;
  }

  /** Keeps submit answers back until release(). */
  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const answer of held) answer();
  }

  get heldCount(): number {
    return this.held?.length ?? 0;
  }

  /** Closes every connection, answers held back included (those messages were not accepted). */
  dropConnections(): void {
    this.held = this.held ? [] : null;
    for (const session of this.sessions) session.socket.destroy();
    this.sessions.clear();
  }

  /** Sends a delivery receipt for a message id to the first bound session. */
  receipt(messageId: string, stat: ReceiptStat, err = '000'): Promise<number> {
    return this.sendReceipt(messageId, stat, {
      err,
      style: this.options.receiptStyle,
      ...RECEIPT_DATES,
    });
  }

  /** Writes raw bytes to every bound session (malformed PDUs). */
  sendRaw(bytes: Buffer): void {
    for (const session of this.sessions) session.socket.write(bytes);
  }

  async waitForSubmits(count: number, timeoutMs = 10_000): Promise<void> {
    await until(() => this.submits.length >= count, timeoutMs);
  }

  async waitForBind(timeoutMs = 10_000): Promise<void> {
    await until(() => this.sessions.size > 0, timeoutMs);
  }

  /**
   * Crashes the SMSC: every connection is cut and the port stops answering. What it answered
   * before stays in `submits`; revive() listens again on the same port.
   */
  async kill(): Promise<void> {
    const port = this.port;
    this.held = this.held ? [] : null;
    await this.close();
    this.killedPort = port;
  }

  async revive(): Promise<void> {
    const port = this.killedPort;
    if (port === null) throw new Error('revive() follows kill()');
    this.killedPort = null;
    await this.listen(port, '127.0.0.1');
  }

  async stop(): Promise<void> {
    if (this.killedPort !== null) return;
    await this.close();
  }

  /** Sends enquire_link to the first bound session; resolves with its answer's name and status. */
  enquireLink(): Promise<{ command: string; status: number }> {
    return this.request('enquire_link', {}).then((answer) => ({
      command: answer.command,
      status: answer.command_status,
    }));
  }

  protected override bind(session: Session, pdu: PduObject, type: BindType): void {
    if (this.alreadyBound > 0) {
      this.alreadyBound--;
      session.send(pdu.response({ command_status: ESME.ESME_RALYBND }));
      return;
    }
    super.bind(session, pdu, type);
  }

  protected override accept(session: Session): void {
    super.accept(session);
    session.on('enquire_link', () => this.enquireLinks++);
    session.on('generic_nack', (pdu: PduObject) => this.answers.push(pdu));
  }

  protected submitted(session: Session, pdu: PduObject): void {
    if (this.throttle > 0) {
      this.throttle--;
      session.send(pdu.response({ command_status: ESME.ESME_RTHROTTLED }));
      return;
    }
    const answer = () => {
      if (!session.socket.writable) return;
      const submit = readSubmit(pdu, this.newId());
      this.submits.push(submit);
      const receipt = () => {
        if (this.options.autoReceipt)
          void this.receipt(submit.messageId, this.options.autoReceipt).catch(() => undefined);
      };
      if (this.options.receiptFirst) receipt();
      session.send(pdu.response({ message_id: submit.messageId }));
      if (!this.options.receiptFirst) receipt();
    };
    if (this.held) this.held.push(answer);
    else answer();
  }
}
