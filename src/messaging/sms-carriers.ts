import type { Scheduler } from '../core/scheduler.js';
import type {
  CarrierHandlers,
  CarrierSet,
  OutboundCarrier,
  OutboundSms,
  PartOutcome,
} from './carrier-network.js';
import type { BindStatus } from './message-metrics.js';
import { routeCarriers, type SmppCarrier } from './smpp/carrier-config.js';
import { TAG, tlvInteger, tlvString, tlvValue } from './smpp/pdu.js';
import type { DeliverSm, SmppLog } from './smpp/smpp-bind.js';
import { SmppCarrierLink } from './smpp/smpp-carrier.js';
import { parseDeliveryReceipt } from './sms/delivery-receipt.js';
import { PartAssembler } from './sms/part-assembler.js';
import { decodeShortMessage, decodeText, type Concatenation } from './sms/short-message-decode.js';

/** SMPP 3.4 5.2.12: esm_class message type bits 2-5; 0x04 is an SMSC delivery receipt. */
const RECEIPT = 0x04;
const UDHI = 0x40;

/**
 * The SMS carriers over SMPP: routes each destination to its carrier by prefix, and turns what
 * carriers deliver into receipts and inbound messages (parts joined).
 */
export class SmsCarriers implements CarrierSet {
  private readonly links: SmppCarrierLink[];
  private readonly outbound = new Map<string, OutboundCarrier>();
  private readonly assembler: PartAssembler;
  /** Assembled inbound messages still being recorded, by assembler key, for logs. */
  constructor(
    carriers: SmppCarrier[],
    private readonly options: CarrierHandlers & {
      scheduler: Scheduler;
      log: SmppLog;
      partTimeoutMs: number;
    },
  ) {
    this.links = carriers.map(
      (carrier) =>
        new SmppCarrierLink(carrier, {
          scheduler: options.scheduler,
          log: options.log,
          onDeliver: (pdu) => this.delivered(carrier.name, pdu),
        }),
    );
    for (const link of this.links)
      this.outbound.set(link.name, { name: link.name, send: (m) => this.send(link, m) });
    this.assembler = new PartAssembler({
      scheduler: options.scheduler,
      timeoutMs: options.partTimeoutMs,
      onComplete: (message) => {
        const [carrier, from, to] = message.key.split('|') as [string, string, string];
        if (message.missing.length > 0)
          options.log.warn(
            { carrier, to, parts: message.parts, missing: message.missing },
            'inbound message parts never arrived: delivering what came',
          );
        options
          .onInbound({ carrier, from, to, text: message.text, units: message.parts })
          .catch((error: Error) =>
            options.log.warn({ carrier, to, err: error.message }, 'inbound message not recorded'),
          );
      },
    });
  }

  /**
   * The carrier of a destination: its best route (routeCarriers) when one of its binds is up,
   * else the next route that has one (failover), else the best route, whose binds send it once
   * they bind again. The choice is made as a message is handed over: what a bind already took
   * stays with its carrier (sent again there after a rebind, never elsewhere).
   */
  route(destination: string): OutboundCarrier | null {
    const routes = routeCarriers(
      this.links.map((l) => l.carrier),
      destination,
    ).map((carrier) => this.links.find((l) => l.carrier === carrier)!);
    const link = routes.find((l) => l.bound) ?? routes[0];
    return link ? (this.outbound.get(link.name) ?? null) : null;
  }

  start(): void {
    for (const link of this.links) link.start();
  }

  async close(): Promise<void> {
    await Promise.all(this.links.map((l) => l.close()));
  }

  status(): BindStatus[] {
    return this.links.flatMap((link) => link.status().map((s) => ({ carrier: link.name, ...s })));
  }

  private send(link: SmppCarrierLink, message: OutboundSms): Promise<PartOutcome[]> {
    return link.submitMessage({
      source: message.source,
      destination: message.destination,
      dataCoding: message.plan.dataCoding,
      parts: message.plan.parts,
      whole: message.plan.whole,
      deadline: message.deadline,
      onPartAccepted: message.onPartAccepted,
    });
  }

  /** A deliver_sm: a receipt, or an inbound message or one part of it. */
  private async delivered(carrier: string, pdu: DeliverSm): Promise<void> {
    const f = pdu.fields;
    try {
      if ((f.esm_class & 0x3c) === RECEIPT) {
        const receipt = parseDeliveryReceipt({
          text: f.short_message.toString('latin1'),
          receiptedMessageId: tlvString(pdu.tlvs, TAG.receipted_message_id),
          messageState: tlvInteger(pdu.tlvs, TAG.message_state),
          networkErrorCode: tlvValue(pdu.tlvs, TAG.network_error_code),
        });
        if (!receipt) {
          // A receipt's `text:` field quotes the message: it stays out of the log.
          const quote = f.short_message.indexOf('text:');
          const raw = quote < 0 ? f.short_message : f.short_message.subarray(0, quote);
          this.options.log.warn(
            { carrier, raw: raw.subarray(0, 160).toString('hex') },
            'delivery receipt that cannot be read: ignored',
          );
          return;
        }
        await this.options.onReceipt(carrier, receipt);
        return;
      }
      const inbound = readInbound(pdu);
      const key = `${carrier}|${f.source_addr}|${f.destination_addr}`;
      if (!inbound.concat) {
        await this.options.onInbound({
          carrier,
          from: f.source_addr,
          to: f.destination_addr,
          text: inbound.text,
          units: 1,
        });
        return;
      }
      const { reference, total, sequence } = inbound.concat;
      if (!this.assembler.add({ key, reference, total, sequence, text: inbound.text }))
        this.options.log.warn({ carrier, total, sequence }, 'inbound part out of range: ignored');
    } catch (error) {
      // Content stays out of the log: only its length and the data coding.
      this.options.log.warn(
        {
          carrier,
          err: (error as Error).message,
          dataCoding: f.data_coding,
          esmClass: f.esm_class,
          octets: f.short_message.length,
        },
        'deliver_sm that cannot be decoded: acknowledged and dropped',
      );
    }
  }
}

/** The text of an inbound deliver_sm and where it stands among its parts (UDH or SAR). */
function readInbound(pdu: DeliverSm): { text: string; concat: Concatenation | null } {
  const f = pdu.fields;
  const payload = tlvValue(pdu.tlvs, TAG.message_payload);
  if (payload && f.short_message.length === 0)
    return { text: decodeText(payload, f.data_coding), concat: null };
  const decoded = decodeShortMessage(f.short_message, f.data_coding, (f.esm_class & UDHI) !== 0);
  if (decoded.concat) return decoded;
  const reference = tlvInteger(pdu.tlvs, TAG.sar_msg_ref_num);
  const total = tlvInteger(pdu.tlvs, TAG.sar_total_segments);
  const sequence = tlvInteger(pdu.tlvs, TAG.sar_segment_seqnum);
  if (reference !== undefined && total !== undefined && sequence !== undefined)
    return { text: decoded.text, concat: { reference, total, sequence, sixteenBit: true } };
  return decoded;
}
