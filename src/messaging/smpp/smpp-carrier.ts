import type { Scheduler } from '../../core/scheduler.js';
import type { SmppCarrier } from './carrier-config.js';
import { concatenationUdh } from '../sms/sms-plan.js';
import { TAG, tlv, type ShortMessageFields, type Tlv } from './pdu.js';
import {
  SmppBind,
  SmppSubmitError,
  type BindState,
  type DeliverSm,
  type SmppLog,
} from './smpp-bind.js';

/** One message as the carrier link sends it: bytes already encoded, split into parts. */
export interface CarrierSubmission {
  source: string;
  destination: string;
  dataCoding: number;
  /** Each part's payload, without any UDH. */
  parts: Buffer[];
  /** The whole text encoded (message_payload mode). */
  whole: Buffer;
  deadline: number;
  onPartAccepted?(part: number, messageId: string): void;
}

export type SubmitOutcome =
  | { ok: true; messageId: string }
  | { ok: false; commandStatus: number | null; expired: boolean; error: string };

export interface BindSummary {
  bind: number;
  state: BindState;
  inFlight: number;
  window: number;
  throttleEvents: number;
  /** How long submits have waited while this bind sent nothing (ms); 0 when none waits. */
  idleWithWorkMs: number;
}

/** SMPP 3.4 5.2.5: registered_delivery 1, a receipt on the final outcome, success or failure. */
const RECEIPT_ON_FINAL = 0x01;
/** SMPP 3.4 5.2.12: esm_class bit 6, the short message starts with a UDH. */
const UDHI = 0x40;

/**
 * A carrier: its binds, and how a message becomes submit_sm PDUs (per the carrier's `long`
 * setting: UDH with an 8- or 16-bit reference, the SAR TLVs, or one message_payload).
 */
export class SmppCarrierLink {
  private readonly binds: SmppBind[];
  private reference = Math.floor(Math.random() * 0xffff);

  constructor(
    readonly carrier: SmppCarrier,
    options: { scheduler?: Scheduler; log: SmppLog; onDeliver(pdu: DeliverSm): Promise<void> },
  ) {
    this.binds = Array.from(
      { length: carrier.binds },
      (_, id) => new SmppBind(carrier, { ...options, id: id + 1 }),
    );
  }

  get name(): string {
    return this.carrier.name;
  }

  start(): void {
    for (const bind of this.binds) bind.start();
  }

  async close(): Promise<void> {
    await Promise.all(this.binds.map((b) => b.close()));
  }

  /** Whether a bind is up: a message handed over now is submitted at once. */
  get bound(): boolean {
    return this.binds.some((b) => b.state === 'bound');
  }

  status(): BindSummary[] {
    return this.binds.map((b, k) => ({
      bind: k + 1,
      state: b.state,
      inFlight: b.inFlight,
      window: this.carrier.window,
      throttleEvents: b.throttleEvents,
      idleWithWorkMs: b.idleWithWork(),
    }));
  }

  async submitMessage(message: CarrierSubmission): Promise<SubmitOutcome[]> {
    const pdus = this.pdus(message);
    return Promise.all(
      pdus.map(async ({ fields, tlvs }, part) => {
        try {
          const messageId = await this.pickBind().submit(fields, tlvs, {
            deadline: message.deadline,
          });
          message.onPartAccepted?.(part, messageId);
          return { ok: true, messageId } as const;
        } catch (error) {
          const e = error as SmppSubmitError;
          return {
            ok: false,
            commandStatus: e.commandStatus ?? null,
            expired: e.expired ?? false,
            error: e.message,
          } as const;
        }
      }),
    );
  }

  /** The bound bind with the least work; any bind when none is bound (it sends after rebind). */
  private pickBind(): SmppBind {
    const load = (b: SmppBind) => b.inFlight + b.queued + (b.state === 'bound' ? 0 : 1_000_000);
    return this.binds.reduce((best, b) => (load(b) < load(best) ? b : best));
  }

  private pdus(message: CarrierSubmission): { fields: ShortMessageFields; tlvs: Tlv[] }[] {
    const base = (shortMessage: Buffer, esmClass: number): ShortMessageFields => ({
      service_type: '',
      ...sourceAddress(message.source),
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      destination_addr: message.destination,
      esm_class: esmClass,
      protocol_id: 0,
      priority_flag: 0,
      schedule_delivery_time: '',
      validity_period: '',
      registered_delivery: RECEIPT_ON_FINAL,
      replace_if_present_flag: 0,
      data_coding: message.dataCoding,
      sm_default_msg_id: 0,
      short_message: shortMessage,
    });
    const { parts } = message;
    if (parts.length === 1) return [{ fields: base(parts[0]!, 0), tlvs: [] }];
    const mode = this.carrier.longMessages;
    if (mode === 'payload')
      return [
        { fields: base(Buffer.alloc(0), 0), tlvs: [tlv.bytes(TAG.message_payload, message.whole)] },
      ];
    const sixteen = mode === 'udh16';
    this.reference = (this.reference + 1) % (sixteen ? 0x10000 : 0x100);
    const reference = this.reference;
    return parts.map((part, k) => {
      if (mode === 'sar')
        return {
          fields: base(part, 0),
          tlvs: [
            tlv.short(TAG.sar_msg_ref_num, reference),
            tlv.byte(TAG.sar_total_segments, parts.length),
            tlv.byte(TAG.sar_segment_seqnum, k + 1),
          ],
        };
      const udh = concatenationUdh(reference, parts.length, k + 1, sixteen);
      return { fields: base(Buffer.concat([udh, part]), UDHI), tlvs: [] };
    });
  }
}

/**
 * SMPP 3.4 5.2.5 and 5.2.6, the source address's type of number and numbering plan: an
 * alphanumeric sender id is TON 5 (alphanumeric), NPI 0; a short code of 3 to 8 digits TON 3
 * (network specific), NPI 0; a number TON 1 (international), NPI 1 (E.164).
 */
export function sourceAddress(source: string): {
  source_addr_ton: number;
  source_addr_npi: number;
  source_addr: string;
} {
  if (!/^\d+$/.test(source)) return { source_addr_ton: 5, source_addr_npi: 0, source_addr: source };
  if (source.length <= 8) return { source_addr_ton: 3, source_addr_npi: 0, source_addr: source };
  return { source_addr_ton: 1, source_addr_npi: 1, source_addr: source };
}
