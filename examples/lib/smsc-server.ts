import type { AddressInfo, Socket } from 'node:net';
import smpp from 'smpp';
import defs from 'smpp/lib/defs.js';

/**
 * What an SMSC built on the `smpp` package's server side needs whatever it is for: binds
 * checked against one system_id and password, enquire_link and unbind answered, submits read
 * as the bytes on the wire, message ids, and the deliver_sm PDUs of receipts and inbound
 * messages. `npm run smsc` (examples/smsc.ts) and the test suite's simulator
 * (test/support/smsc-simulator.ts) are both made of it.
 */

// The package decodes short_message and message_payload into text by its own guess of the
// encoding (the very cause of garbled '@' in gateways built on it). An SMSC wants the bytes on
// the wire, so those filters are taken off for this process.
for (const command of ['submit_sm', 'deliver_sm', 'data_sm'])
  if (defs.commands[command]?.params?.short_message)
    delete defs.commands[command].params.short_message.filter;
delete defs.tlvs.message_payload.filter;

/** A submit_sm as the SMSC received it: the raw fields and the id it answered. */
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
export const RECEIPT_STATS: readonly ReceiptStat[] = [
  'DELIVRD',
  'UNDELIV',
  'EXPIRED',
  'REJECTD',
  'ENROUTE',
];

/** SMPP 3.4 5.2.28: the message_state TLV of each stat. */
const MESSAGE_STATES: Record<ReceiptStat, number> = {
  ENROUTE: 1,
  DELIVRD: 2,
  EXPIRED: 3,
  UNDELIV: 5,
  REJECTD: 8,
};

export type BindType = 'transceiver' | 'transmitter' | 'receiver';

export interface Receipt {
  err?: string;
  /** TLVs and text (default), text only, or TLVs only. */
  style?: 'both' | 'text' | 'tlv';
  /** `YYMMDDhhmm` of the submit and of the outcome; the current time when not given. */
  submitDate?: string;
  doneDate?: string;
}

export interface InboundMessage {
  from: string;
  to: string;
  shortMessage: Buffer;
  dataCoding?: number;
  esmClass?: number;
  sar?: { reference: number; total: number; sequence: number };
}

export interface SmscServerOptions {
  systemId?: string;
  password?: string;
  /** How message ids are written: hex (default), decimal, or hex with leading zeros. */
  ids?: 'hex' | 'decimal' | 'padded-hex';
  /** The system_id the SMSC answers a bind with (its own name). */
  smscId?: string;
}

/** smpp's session and PDUs, as far as an SMSC uses them. */
export type Session = any; // eslint-disable-line @typescript-eslint/no-explicit-any
export type PduObject = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The name of an SMPP command_status (`ESME_RTHROTTLED`), or its hex value. */
export function statusName(status: number): string {
  for (const [name, value] of Object.entries(defs.errors as Record<string, number>))
    if (value === status) return name;
  return `0x${status.toString(16).padStart(8, '0')}`;
}

export const ESME = defs.errors as Record<string, number>;

/**
 * A listening SMSC: binds of the three kinds with the configured credentials, enquire_link
 * and unbind answered, every connection kept so that close() can cut it. What a submit_sm
 * gets is the subclass's choice (`submitted`).
 */
export abstract class SmscServer {
  /** Bound sessions, in the order they bound. */
  readonly sessions = new Set<Session>();
  /** Binds accepted so far. */
  binds = 0;
  /** Every connection, bound or not. */
  protected readonly sockets = new Set<Socket>();
  protected readonly server: Session;
  protected readonly credentials: { systemId: string; password: string };
  private readonly smscId: string;
  private readonly bindTypes = new WeakMap<Session, BindType>();
  private readonly ids: NonNullable<SmscServerOptions['ids']>;
  private nextId = 0x1a2b00;

  protected constructor(options: SmscServerOptions) {
    this.credentials = {
      systemId: options.systemId ?? 'voxgate',
      password: options.password ?? 'secret',
    };
    this.ids = options.ids ?? 'hex';
    this.smscId = options.smscId ?? 'voxgate-smsc';
    this.server = smpp.createServer({}, (session: Session) => this.accept(session));
  }

  protected listen(port: number, host: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The VOXGATE_SMPP_URL of this SMSC, with carrier parameters. */
  url(parameters = '', host = '127.0.0.1'): string {
    const { systemId, password } = this.credentials;
    const query = parameters ? `?${parameters}` : '';
    return `smpp://${encodeURIComponent(systemId)}:${encodeURIComponent(password)}@${host}:${this.port}${query}`;
  }

  /** How `session` bound, once it has. */
  bindTypeOf(session: Session): BindType | undefined {
    return this.bindTypes.get(session);
  }

  /**
   * Sends a delivery receipt for a message id to the first session that takes deliver_sm;
   * resolves with the command_status of the answer.
   */
  sendReceipt(messageId: string, stat: ReceiptStat, receipt: Receipt = {}): Promise<number> {
    const style = receipt.style ?? 'both';
    const now = receiptDate(new Date());
    // SMPP 3.4 Appendix B: the text format most SMSCs follow.
    const text =
      `id:${messageId} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} ` +
      `submit date:${receipt.submitDate ?? now} done date:${receipt.doneDate ?? now} ` +
      `stat:${stat} err:${receipt.err ?? '000'} text:`;
    return this.deliver({
      esm_class: 0x04,
      short_message: style === 'tlv' ? Buffer.alloc(0) : Buffer.from(text),
      ...(style === 'text'
        ? {}
        : { receipted_message_id: messageId, message_state: MESSAGE_STATES[stat] }),
    });
  }

  /** Sends an inbound deliver_sm; resolves with the command_status of the answer. */
  inbound(message: InboundMessage): Promise<number> {
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

  /** Cuts every connection and stops listening. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    this.sessions.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Answers a submit_sm (or holds, refuses...); `newId()` gives its message id. */
  protected abstract submitted(session: Session, pdu: PduObject): void;

  /** Answers a bind: the credentials are checked. */
  protected bind(session: Session, pdu: PduObject, type: BindType): void {
    const { systemId, password } = this.credentials;
    if (pdu.system_id !== systemId || pdu.password !== password) {
      session.send(pdu.response({ command_status: ESME.ESME_RINVPASWD }));
      return;
    }
    this.binds++;
    this.bindTypes.set(session, type);
    session.send(pdu.response({ system_id: this.smscId }));
    this.sessions.add(session);
  }

  protected accept(session: Session): void {
    // As a carrier's SMSC would: an answer and the receipt after it are not held back by
    // Nagle's algorithm waiting for the gateway's delayed ACK.
    session.socket.setNoDelay(true);
    this.sockets.add(session.socket);
    session.socket.once('close', () => this.sockets.delete(session.socket));
    session.on('error', () => session.socket.destroy());
    session.on('close', () => this.sessions.delete(session));
    for (const type of ['transceiver', 'transmitter', 'receiver'] as const)
      session.on(`bind_${type}`, (pdu: PduObject) => this.bind(session, pdu, type));
    session.on('enquire_link', (pdu: PduObject) => session.send(pdu.response()));
    session.on('unbind', (pdu: PduObject) => {
      session.send(pdu.response());
      this.sessions.delete(session);
      session.close();
    });
    session.on('submit_sm', (pdu: PduObject) => {
      // SMPP 3.4 4.4: a receiver bind may not submit.
      if (this.bindTypes.get(session) === 'receiver' || !this.sessions.has(session)) {
        session.send(pdu.response({ command_status: ESME.ESME_RINVBNDSTS }));
        return;
      }
      this.submitted(session, pdu);
    });
  }

  protected newId(): string {
    const id = this.nextId++;
    if (this.ids === 'decimal') return String(id);
    if (this.ids === 'padded-hex') return id.toString(16).toUpperCase().padStart(10, '0');
    return id.toString(16);
  }

  protected deliver(options: Record<string, unknown>): Promise<number> {
    return this.request('deliver_sm', options).then((answer) => answer.command_status);
  }

  /** Sends a request to the first bound session that takes deliver_sm. */
  protected request(command: string, options: Record<string, unknown>): Promise<PduObject> {
    const session = [...this.sessions].find((s) => this.bindTypes.get(s) !== 'transmitter');
    if (!session) return Promise.reject(new Error(`no bound session to send ${command} to`));
    return new Promise((resolve) => session.send(new smpp.PDU(command, options), resolve));
  }
}

/** The fields of a submit_sm PDU, with the message id it is answered with. */
export function readSubmit(pdu: PduObject, messageId: string): ReceivedSubmit {
  return {
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
  };
}

/** SMPP 3.4 Appendix B: `YYMMDDhhmm`. */
function receiptDate(at: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    two(at.getUTCFullYear() % 100) +
    two(at.getUTCMonth() + 1) +
    two(at.getUTCDate()) +
    two(at.getUTCHours()) +
    two(at.getUTCMinutes())
  );
}
