import type { AddressInfo } from 'node:net';
import smpp from 'smpp';
import defs from 'smpp/lib/defs.js';
import { until } from './wait.js';

// The package decodes short_message and message_payload into text by its own guess of the
// encoding (the very cause of garbled '@' in gateways built on it). The simulator wants the
// bytes on the wire, so those filters are taken off for this process.
for (const command of ['submit_sm', 'deliver_sm', 'data_sm'])
  if (defs.commands[command]?.params?.short_message)
    delete defs.commands[command].params.short_message.filter;
delete defs.tlvs.message_payload.filter;

/** A submit_sm as the simulator received it: the raw fields and the id it answered. */
export interface ReceivedSubmit {
  sourceAddr: string;
  sourceTon: number;
  destinationAddr: string;
  esmClass: number;
  dataCoding: number;
  registeredDelivery: number;
  shortMessage: Buffer;
  messagePayload: Buffer | null;
  sar: { reference: number; total: number; sequence: number } | null;
  messageId: string;
}

export type ReceiptStat = 'DELIVRD' | 'UNDELIV' | 'EXPIRED' | 'REJECTD' | 'ENROUTE';

export interface SmscOptions {
  systemId?: string;
  password?: string;
  /** How message ids are written: hex (default), decimal, or hex with leading zeros. */
  ids?: 'hex' | 'decimal' | 'padded-hex';
  /** Sends a receipt for each accepted part at once, with this stat (off when null). */
  autoReceipt?: ReceiptStat | null;
  /** Receipt style: TLVs and text (default), text only, or TLVs only. */
  receiptStyle?: 'both' | 'text' | 'tlv';
  /** With autoReceipt: the receipt goes out before the submit_sm_resp, as some SMSCs do. */
  receiptFirst?: boolean;
}

/** smpp's session, as far as the simulator uses it. */
type Session = any; // eslint-disable-line @typescript-eslint/no-explicit-any
type PduObject = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * An SMSC on 127.0.0.1 and a random port, on the `smpp` package's server side: it checks the
 * credentials, answers submit_sm with ids, records what it received, sends receipts and
 * inbound messages, and misbehaves on demand (throttling, held answers, dropped connections,
 * "already bound", malformed PDUs). A message counts as accepted only once its answer is sent.
 */
export class SmscSimulator {
  readonly submits: ReceivedSubmit[] = [];
  readonly sessions = new Set<Session>();
  binds = 0;
  enquireLinks = 0;
  private nextId = 0x1a2b00;
  private throttle = 0;
  private alreadyBound = 0;
  private held: (() => void)[] | null = null;
  /** Every connection, bound or not: a killed SMSC drops them all. */
  private readonly sockets = new Set<import('node:net').Socket>();
  private killedPort: number | null = null;
  private readonly server: Session;
  private readonly options: Required<SmscOptions>;

  private constructor(options: SmscOptions) {
    this.options = {
      systemId: 'voxgate',
      password: 'secret',
      ids: 'hex',
      autoReceipt: null,
      receiptStyle: 'both',
      receiptFirst: false,
      ...options,
    };
    this.server = smpp.createServer({}, (session: Session) => this.accept(session));
  }

  static async start(options: SmscOptions = {}): Promise<SmscSimulator> {
    const simulator = new SmscSimulator(options);
    await new Promise<void>((resolve) => simulator.server.listen(0, '127.0.0.1', resolve));
    return simulator;
  }

  get port(): number {
    return this.killedPort ?? (this.server.address() as AddressInfo).port;
  }

  /** The VOXGATE_SMPP_URL of this SMSC, with carrier parameters. */
  url(parameters = ''): string {
    const { systemId, password } = this.options;
    return `smpp://${systemId}:${password}@127.0.0.1:${this.port}${parameters ? `?${parameters}` : ''}`;
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
    const style = this.options.receiptStyle;
    const state = { DELIVRD: 2, EXPIRED: 3, UNDELIV: 5, REJECTD: 8, ENROUTE: 1 }[stat];
    const text = `id:${messageId} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:2611241200 done date:2611241201 stat:${stat} err:${err} text:`;
    return this.deliver({
      esm_class: 0x04,
      short_message: style === 'tlv' ? Buffer.alloc(0) : Buffer.from(text),
      ...(style === 'text' ? {} : { receipted_message_id: messageId, message_state: state }),
    });
  }

  /** Sends an inbound deliver_sm; resolves with the command_status of the answer. */
  inbound(message: {
    from: string;
    to: string;
    shortMessage: Buffer;
    dataCoding?: number;
    esmClass?: number;
    sar?: { reference: number; total: number; sequence: number };
  }): Promise<number> {
    return this.deliver({
      source_addr_ton: 1,
      source_addr_npi: 1,
      source_addr: message.from,
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      destination_addr: message.to,
      esm_class: message.esmClass ?? 0,
      data_coding: message.dataCoding ?? 0,
      short_message: message.shortMessage,
      ...(message.sar
        ? {
            sar_msg_ref_num: message.sar.reference,
            sar_total_segments: message.sar.total,
            sar_segment_seqnum: message.sar.sequence,
          }
        : {}),
    });
  }

  /** Writes raw bytes to every bound session (malformed PDUs). */
  sendRaw(bytes: Buffer): void {
    for (const session of this.sessions) session.socket.write(bytes);
  }

  /** Every PDU the sessions sent back after sendRaw (generic_nack...), in order. */
  readonly answers: PduObject[] = [];

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
    this.killedPort = this.port;
    this.held = this.held ? [] : null;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    this.sessions.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async revive(): Promise<void> {
    const port = this.killedPort;
    if (port === null) throw new Error('revive() follows kill()');
    this.killedPort = null;
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    if (this.killedPort !== null) return;
    for (const socket of this.sockets) socket.destroy();
    for (const session of this.sessions) session.socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Sends enquire_link to the first bound session; resolves with its answer's name and status. */
  enquireLink(): Promise<{ command: string; status: number }> {
    return this.request('enquire_link', {}).then((answer) => ({
      command: answer.command,
      status: answer.command_status,
    }));
  }

  private deliver(options: Record<string, unknown>): Promise<number> {
    return this.request('deliver_sm', options).then((answer) => answer.command_status);
  }

  private request(command: string, options: Record<string, unknown>): Promise<PduObject> {
    const [session] = this.sessions;
    if (!session) return Promise.reject(new Error(`no bound session to send ${command} to`));
    return new Promise((resolve) => session.send(new smpp.PDU(command, options), resolve));
  }

  private accept(session: Session): void {
    // As a carrier's SMSC would: an answer and the receipt after it are not held back by
    // Nagle's algorithm waiting for the gateway's delayed ACK.
    session.socket.setNoDelay(true);
    this.sockets.add(session.socket);
    session.socket.once('close', () => this.sockets.delete(session.socket));
    session.on('error', () => session.socket.destroy());
    session.on('close', () => this.sessions.delete(session));
    session.on('bind_transceiver', (pdu: PduObject) => {
      if (this.alreadyBound > 0) {
        this.alreadyBound--;
        session.send(pdu.response({ command_status: defs.errors.ESME_RALYBND }));
        return;
      }
      const ok = pdu.system_id === this.options.systemId && pdu.password === this.options.password;
      if (!ok) {
        session.send(pdu.response({ command_status: defs.errors.ESME_RINVPASWD }));
        return;
      }
      this.binds++;
      session.send(pdu.response({ system_id: 'simulator' }));
      this.sessions.add(session);
    });
    session.on('enquire_link', (pdu: PduObject) => {
      this.enquireLinks++;
      session.send(pdu.response());
    });
    session.on('unbind', (pdu: PduObject) => {
      session.send(pdu.response());
      this.sessions.delete(session);
      session.close();
    });
    session.on('generic_nack', (pdu: PduObject) => this.answers.push(pdu));
    session.on('submit_sm', (pdu: PduObject) => this.submitted(session, pdu));
  }

  private submitted(session: Session, pdu: PduObject): void {
    if (this.throttle > 0) {
      this.throttle--;
      session.send(pdu.response({ command_status: defs.errors.ESME_RTHROTTLED }));
      return;
    }
    const answer = () => {
      if (!session.socket.writable) return;
      const messageId = this.newId();
      this.submits.push({
        sourceAddr: pdu.source_addr,
        sourceTon: pdu.source_addr_ton,
        destinationAddr: pdu.destination_addr,
        esmClass: pdu.esm_class,
        dataCoding: pdu.data_coding,
        registeredDelivery: pdu.registered_delivery,
        shortMessage: Buffer.from(pdu.short_message ?? []),
        messagePayload: pdu.message_payload ? Buffer.from(pdu.message_payload) : null,
        sar:
          pdu.sar_msg_ref_num === undefined
            ? null
            : {
                reference: pdu.sar_msg_ref_num,
                total: pdu.sar_total_segments,
                sequence: pdu.sar_segment_seqnum,
              },
        messageId,
      });
      const receipt = () => {
        if (this.options.autoReceipt)
          void this.receipt(messageId, this.options.autoReceipt).catch(() => undefined);
      };
      if (this.options.receiptFirst) receipt();
      session.send(pdu.response({ message_id: messageId }));
      if (!this.options.receiptFirst) receipt();
    };
    if (this.held) this.held.push(answer);
    else answer();
  }

  private newId(): string {
    const id = this.nextId++;
    if (this.options.ids === 'decimal') return String(id);
    if (this.options.ids === 'padded-hex') return id.toString(16).toUpperCase().padStart(10, '0');
    return id.toString(16);
  }
}
