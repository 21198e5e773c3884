/**
 * SMPP 3.4 PDUs: the header, the bodies voxgate sends and receives, and TLVs.
 *
 * SMPP 3.4 section 3.2, the PDU header:
 *
 *   +-----------------+-----------------+------------------+-------------------+
 *   | command_length  | command_id      | command_status   | sequence_number   |
 *   | 4 octets        | 4 octets        | 4 octets         | 4 octets          |
 *   +-----------------+-----------------+------------------+-------------------+
 *   | body (command_length - 16 octets): mandatory parameters, then TLVs       |
 *   +--------------------------------------------------------------------------+
 *
 * Integers are big-endian; strings are C-Octet strings (ASCII ending in a NUL).
 */

export const HEADER_LENGTH = 16;
/** A larger PDU is refused as a framing error (a short message is at most 254 octets). */
export const MAX_PDU_LENGTH = 64 * 1024;

export const COMMAND = {
  generic_nack: 0x80000000,
  bind_receiver: 0x00000001,
  bind_receiver_resp: 0x80000001,
  bind_transmitter: 0x00000002,
  bind_transmitter_resp: 0x80000002,
  submit_sm: 0x00000004,
  submit_sm_resp: 0x80000004,
  deliver_sm: 0x00000005,
  deliver_sm_resp: 0x80000005,
  unbind: 0x00000006,
  unbind_resp: 0x80000006,
  bind_transceiver: 0x00000009,
  bind_transceiver_resp: 0x80000009,
  enquire_link: 0x00000015,
  enquire_link_resp: 0x80000015,
  data_sm: 0x00000103,
  data_sm_resp: 0x80000103,
} as const;

export type CommandName = keyof typeof COMMAND;

const NAMES = new Map<number, CommandName>(
  Object.entries(COMMAND).map(([name, id]) => [id, name as CommandName]),
);

/** SMPP 3.4 section 5.1.3, the command_status values voxgate reads or sends. */
export const STATUS = {
  ESME_ROK: 0x00,
  ESME_RINVMSGLEN: 0x01,
  ESME_RINVCMDLEN: 0x02,
  ESME_RINVCMDID: 0x03,
  ESME_RINVBNDSTS: 0x04,
  ESME_RALYBND: 0x05,
  ESME_RSYSERR: 0x08,
  ESME_RINVSRCADR: 0x0a,
  ESME_RINVDSTADR: 0x0b,
  ESME_RINVMSGID: 0x0c,
  ESME_RBINDFAIL: 0x0d,
  ESME_RINVPASWD: 0x0e,
  ESME_RINVSYSID: 0x0f,
  ESME_RMSGQFUL: 0x14,
  ESME_RSUBMITFAIL: 0x45,
  ESME_RTHROTTLED: 0x58,
  ESME_RX_T_APPN: 0x64,
  ESME_RX_P_APPN: 0x65,
  ESME_RUNKNOWNERR: 0xff,
} as const;

/** SMPP 3.4 section 5.3.2, the TLV tags voxgate reads or writes. */
export const TAG = {
  user_message_reference: 0x0204,
  sar_msg_ref_num: 0x020c,
  sar_total_segments: 0x020e,
  sar_segment_seqnum: 0x020f,
  message_payload: 0x0424,
  receipted_message_id: 0x001e,
  message_state: 0x0427,
  network_error_code: 0x0423,
  sc_interface_version: 0x0210,
} as const;

export interface Tlv {
  tag: number;
  value: Buffer;
}

/** The fields of submit_sm and deliver_sm (SMPP 3.4 sections 4.4.1 and 4.6.1). */
export interface ShortMessageFields {
  service_type: string;
  source_addr_ton: number;
  source_addr_npi: number;
  source_addr: string;
  dest_addr_ton: number;
  dest_addr_npi: number;
  destination_addr: string;
  esm_class: number;
  protocol_id: number;
  priority_flag: number;
  schedule_delivery_time: string;
  validity_period: string;
  registered_delivery: number;
  replace_if_present_flag: number;
  data_coding: number;
  sm_default_msg_id: number;
  short_message: Buffer;
}

export interface BindFields {
  system_id: string;
  password: string;
  system_type: string;
  interface_version: number;
  addr_ton: number;
  addr_npi: number;
  address_range: string;
}

export type Pdu =
  | PduOf<'bind_transceiver' | 'bind_transmitter' | 'bind_receiver', BindFields>
  | PduOf<'submit_sm' | 'deliver_sm', ShortMessageFields>
  | PduOf<
      | 'bind_transceiver_resp'
      | 'bind_transmitter_resp'
      | 'bind_receiver_resp'
      | 'submit_sm_resp'
      | 'deliver_sm_resp'
      | 'data_sm_resp',
      { system_id?: string; message_id?: string }
    >
  | PduOf<
      'unbind' | 'unbind_resp' | 'enquire_link' | 'enquire_link_resp' | 'generic_nack' | 'data_sm',
      Record<string, never>
    >;

interface PduOf<N extends CommandName, F> {
  command: N;
  status: number;
  sequence: number;
  fields: F;
  tlvs: Tlv[];
}

/** A PDU that could not be read; `sequence` when the header was readable. */
export class PduError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly sequence: number | null,
  ) {
    super(message);
    this.name = 'PduError';
  }
}

const SM_STRINGS = { service_type: 6, source_addr: 21, destination_addr: 21 } as const;

export function encodePdu(pdu: Pdu): Buffer {
  const body = new Writer();
  const f = pdu.fields as Record<string, unknown>;
  switch (pdu.command) {
    case 'bind_transceiver':
    case 'bind_transmitter':
    case 'bind_receiver': {
      const b = pdu.fields;
      body.cstring(b.system_id, 16, 'system_id');
      body.cstring(b.password, 9, 'password');
      body.cstring(b.system_type, 13, 'system_type');
      body.byte(b.interface_version).byte(b.addr_ton).byte(b.addr_npi);
      body.cstring(b.address_range, 41, 'address_range');
      break;
    }
    case 'submit_sm':
    case 'deliver_sm': {
      const m = pdu.fields;
      if (m.short_message.length > 254)
        throw new RangeError('short_message is at most 254 octets: use message_payload');
      body.cstring(m.service_type, SM_STRINGS.service_type, 'service_type');
      body.byte(m.source_addr_ton).byte(m.source_addr_npi);
      body.cstring(m.source_addr, SM_STRINGS.source_addr, 'source_addr');
      body.byte(m.dest_addr_ton).byte(m.dest_addr_npi);
      body.cstring(m.destination_addr, SM_STRINGS.destination_addr, 'destination_addr');
      body.byte(m.esm_class).byte(m.protocol_id).byte(m.priority_flag);
      body.cstring(m.schedule_delivery_time, 17, 'schedule_delivery_time');
      body.cstring(m.validity_period, 17, 'validity_period');
      body.byte(m.registered_delivery).byte(m.replace_if_present_flag);
      body.byte(m.data_coding).byte(m.sm_default_msg_id);
      body.byte(m.short_message.length).bytes(m.short_message);
      break;
    }
    case 'bind_transceiver_resp':
    case 'bind_transmitter_resp':
    case 'bind_receiver_resp':
      if (pdu.status === 0 || f.system_id !== undefined)
        body.cstring(String(f.system_id ?? ''), 16, 'system_id');
      break;
    case 'submit_sm_resp':
    case 'deliver_sm_resp':
    case 'data_sm_resp':
      // SMPP 3.4 4.4.2: on an error the body may be left out; voxgate always writes it.
      body.cstring(String(f.message_id ?? ''), 65, 'message_id');
      break;
    default:
      break;
  }
  for (const tlv of pdu.tlvs) body.short(tlv.tag).short(tlv.value.length).bytes(tlv.value);
  const content = body.done();
  const header = Buffer.alloc(HEADER_LENGTH);
  header.writeUInt32BE(HEADER_LENGTH + content.length, 0);
  header.writeUInt32BE(COMMAND[pdu.command], 4);
  header.writeUInt32BE(pdu.status >>> 0, 8);
  header.writeUInt32BE(pdu.sequence >>> 0, 12);
  return Buffer.concat([header, content]);
}

/** Reads one whole PDU (its command_length octets). Throws PduError. */
export function decodePdu(buffer: Buffer): Pdu {
  const length = buffer.readUInt32BE(0);
  const commandId = buffer.readUInt32BE(4);
  const status = buffer.readUInt32BE(8);
  const sequence = buffer.readUInt32BE(12);
  const command = NAMES.get(commandId);
  if (!command)
    throw new PduError(
      `unknown command_id 0x${commandId.toString(16).padStart(8, '0')}`,
      STATUS.ESME_RINVCMDID,
      sequence,
    );
  const reader = new Reader(buffer.subarray(HEADER_LENGTH, length), sequence);
  let fields: Record<string, unknown> = {};
  switch (command) {
    case 'bind_transceiver':
    case 'bind_transmitter':
    case 'bind_receiver':
      fields = {
        system_id: reader.cstring('system_id'),
        password: reader.cstring('password'),
        system_type: reader.cstring('system_type'),
        interface_version: reader.byte(),
        addr_ton: reader.byte(),
        addr_npi: reader.byte(),
        address_range: reader.cstring('address_range'),
      };
      break;
    case 'submit_sm':
    case 'deliver_sm':
      fields = { ...readShortMessage(reader) };
      break;
    case 'bind_transceiver_resp':
    case 'bind_transmitter_resp':
    case 'bind_receiver_resp':
      if (!reader.atEnd()) fields = { system_id: reader.cstring('system_id') };
      break;
    case 'submit_sm_resp':
    case 'deliver_sm_resp':
    case 'data_sm_resp':
      if (!reader.atEnd()) fields = { message_id: reader.cstring('message_id') };
      break;
    default:
      break;
  }
  const tlvs = command === 'data_sm' ? [] : reader.tlvs();
  return { command, status, sequence, fields, tlvs } as Pdu;
}

function readShortMessage(reader: Reader): ShortMessageFields {
  const fields: Omit<ShortMessageFields, 'short_message'> = {
    service_type: reader.cstring('service_type'),
    source_addr_ton: reader.byte(),
    source_addr_npi: reader.byte(),
    source_addr: reader.cstring('source_addr'),
    dest_addr_ton: reader.byte(),
    dest_addr_npi: reader.byte(),
    destination_addr: reader.cstring('destination_addr'),
    esm_class: reader.byte(),
    protocol_id: reader.byte(),
    priority_flag: reader.byte(),
    schedule_delivery_time: reader.cstring('schedule_delivery_time'),
    validity_period: reader.cstring('validity_period'),
    registered_delivery: reader.byte(),
    replace_if_present_flag: reader.byte(),
    data_coding: reader.byte(),
    sm_default_msg_id: reader.byte(),
  };
  return { ...fields, short_message: reader.bytes(reader.byte(), 'short_message') };
}

/** The value of a TLV, if present. */
export function tlvValue(tlvs: readonly Tlv[], tag: number): Buffer | undefined {
  return tlvs.find((t) => t.tag === tag)?.value;
}

export function tlvInteger(tlvs: readonly Tlv[], tag: number): number | undefined {
  const value = tlvValue(tlvs, tag);
  if (!value || value.length === 0 || value.length > 4) return undefined;
  return value.readUIntBE(0, value.length);
}

/** A C-Octet string TLV value without its NUL. */
export function tlvString(tlvs: readonly Tlv[], tag: number): string | undefined {
  const value = tlvValue(tlvs, tag);
  if (!value) return undefined;
  const end = value.indexOf(0);
  return value.subarray(0, end < 0 ? value.length : end).toString('latin1');
}

export const tlv = {
  byte: (tag: number, value: number): Tlv => ({ tag, value: Buffer.from([value & 0xff]) }),
  short: (tag: number, value: number): Tlv => {
    const buffer = Buffer.alloc(2);
    buffer.writeUInt16BE(value & 0xffff);
    return { tag, value: buffer };
  },
  bytes: (tag: number, value: Buffer): Tlv => ({ tag, value }),
};

class Writer {
  private readonly chunks: Buffer[] = [];

  byte(value: number): this {
    this.chunks.push(Buffer.from([value & 0xff]));
    return this;
  }

  short(value: number): this {
    const buffer = Buffer.alloc(2);
    buffer.writeUInt16BE(value & 0xffff);
    this.chunks.push(buffer);
    return this;
  }

  bytes(value: Buffer): this {
    this.chunks.push(value);
    return this;
  }

  cstring(value: string, max: number, field: string): this {
    const bytes = Buffer.from(value, 'latin1');
    if (bytes.length > max - 1)
      throw new RangeError(`${field} is at most ${max - 1} characters, got ${bytes.length}`);
    this.chunks.push(bytes, Buffer.from([0]));
    return this;
  }

  done(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

class Reader {
  private at = 0;

  constructor(
    private readonly buffer: Buffer,
    private readonly sequence: number,
  ) {}

  atEnd(): boolean {
    return this.at >= this.buffer.length;
  }

  byte(): number {
    if (this.at >= this.buffer.length) throw this.short('a mandatory field');
    return this.buffer[this.at++]!;
  }

  bytes(count: number, field: string): Buffer {
    if (this.at + count > this.buffer.length) throw this.short(field);
    const value = this.buffer.subarray(this.at, this.at + count);
    this.at += count;
    return Buffer.from(value);
  }

  cstring(field: string): string {
    const end = this.buffer.indexOf(0, this.at);
    if (end < 0) throw this.short(field);
    const value = this.buffer.subarray(this.at, end).toString('latin1');
    this.at = end + 1;
    return value;
  }

  tlvs(): Tlv[] {
    const tlvs: Tlv[] = [];
    while (this.at < this.buffer.length) {
      if (this.at + 4 > this.buffer.length) throw this.short('a TLV header');
      const tag = this.buffer.readUInt16BE(this.at);
      const length = this.buffer.readUInt16BE(this.at + 2);
      this.at += 4;
      tlvs.push({ tag, value: this.bytes(length, `TLV 0x${tag.toString(16).padStart(4, '0')}`) });
    }
    return tlvs;
  }

  private short(field: string): PduError {
    return new PduError(`the PDU ends inside ${field}`, STATUS.ESME_RINVCMDLEN, this.sequence);
  }
}

/**
 * Splits a byte stream into PDUs. A command_length below 16 or above MAX_PDU_LENGTH cannot be
 * framed: the stream is beyond repair and `fatal` is reported; a PDU that frames but cannot be
 * read is reported with its sequence number and the stream goes on.
 */
export class PduReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): {
    pdus: Pdu[];
    errors: { error: PduError; raw: Buffer }[];
    fatal: string | null;
  } {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const pdus: Pdu[] = [];
    const errors: { error: PduError; raw: Buffer }[] = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32BE(0);
      if (length < HEADER_LENGTH || length > MAX_PDU_LENGTH)
        return {
          pdus,
          errors,
          fatal: `command_length ${length} is out of range (16 to ${MAX_PDU_LENGTH})`,
        };
      if (this.pending.length < length) break;
      const raw = this.pending.subarray(0, length);
      this.pending = this.pending.subarray(length);
      try {
        pdus.push(decodePdu(raw));
      } catch (error) {
        if (!(error instanceof PduError)) throw error;
        errors.push({ error, raw: Buffer.from(raw) });
      }
    }
    return { pdus, errors, fatal: null };
  }
}
