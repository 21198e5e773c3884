import { describe, expect, it } from 'vitest';
import {
  parseSmppCarriers,
  routeCarrier,
  routeCarriers,
} from '../../../../src/messaging/smpp/carrier-config.js';
import {
  decodePdu,
  encodePdu,
  PduReader,
  STATUS,
  TAG,
  tlvInteger,
  tlvString,
  type Pdu,
} from '../../../../src/messaging/smpp/pdu.js';

// bind_transceiver, system_id "sys", password "pw", system_type "", version 0x34, TON/NPI 0/0,
// address_range "": SMPP 3.4 section 4.1.5, written out by hand.
const BIND_HEX =
  '0000001c' +
  '00000009' +
  '00000000' +
  '00000001' +
  '73797300' +
  '707700' +
  '00' +
  '34' +
  '00' +
  '00' +
  '00';

describe('SMPP PDUs', () => {
  it('writes bind_transceiver byte for byte', () => {
    const pdu: Pdu = {
      command: 'bind_transceiver',
      status: 0,
      sequence: 1,
      fields: {
        system_id: 'sys',
        password: 'pw',
        system_type: '',
        interface_version: 0x34,
        addr_ton: 0,
        addr_npi: 0,
        address_range: '',
      },
      tlvs: [],
    };
    expect(encodePdu(pdu).toString('hex')).toBe(BIND_HEX);
    expect(decodePdu(Buffer.from(BIND_HEX, 'hex'))).toEqual(pdu);
  });

  it('reads a receipt deliver_sm with its TLVs and writes it back the same', () => {
    const receipt: Pdu = {
      command: 'deliver_sm',
      status: 0,
      sequence: 9,
      fields: {
        service_type: '',
        source_addr_ton: 1,
        source_addr_npi: 1,
        source_addr: '447400123456',
        dest_addr_ton: 1,
        dest_addr_npi: 1,
        destination_addr: '14155550100',
        esm_class: 0x04,
        protocol_id: 0,
        priority_flag: 0,
        schedule_delivery_time: '',
        validity_period: '',
        registered_delivery: 0,
        replace_if_present_flag: 0,
        data_coding: 0,
        sm_default_msg_id: 0,
        short_message: Buffer.from('id:1a2b stat:DELIVRD err:000'),
      },
      tlvs: [
        { tag: TAG.receipted_message_id, value: Buffer.from('1a2b\0') },
        { tag: TAG.message_state, value: Buffer.from([2]) },
      ],
    };
    const bytes = encodePdu(receipt);
    expect(bytes.readUInt32BE(0)).toBe(bytes.length);
    const read = decodePdu(bytes);
    expect(read).toEqual(receipt);
    expect(tlvString(read.tlvs, TAG.receipted_message_id)).toBe('1a2b');
    expect(tlvInteger(read.tlvs, TAG.message_state)).toBe(2);
  });

  it('frames PDUs split across chunks and several in one chunk', () => {
    const one = Buffer.from(BIND_HEX, 'hex');
    const enquire = encodePdu({
      command: 'enquire_link',
      status: 0,
      sequence: 2,
      fields: {},
      tlvs: [],
    });
    const stream = Buffer.concat([one, enquire, one]);
    const reader = new PduReader();
    const seen: string[] = [];
    for (let k = 0; k < stream.length; k += 7)
      for (const pdu of reader.push(stream.subarray(k, k + 7)).pdus) seen.push(pdu.command);
    expect(seen).toEqual(['bind_transceiver', 'enquire_link', 'bind_transceiver']);
  });

  it('reports a PDU cut short with its sequence, and an unknown command, and goes on', () => {
    const reader = new PduReader();
    const cut = Buffer.from('000000120000000500000000000000070041', 'hex');
    const unknown = Buffer.from('00000010000000ff0000000000000008', 'hex');
    const { pdus, errors, fatal } = reader.push(Buffer.concat([cut, unknown]));
    expect(pdus).toEqual([]);
    expect(fatal).toBeNull();
    expect(errors.map((e) => [e.error.status, e.error.sequence])).toEqual([
      [STATUS.ESME_RINVCMDLEN, 7],
      [STATUS.ESME_RINVCMDID, 8],
    ]);
    expect(reader.push(Buffer.from('00000004', 'hex')).fatal).toBe(
      'command_length 4 is out of range (16 to 65536)',
    );
  });

  it('refuses a field longer than SMPP allows', () => {
    expect(() =>
      encodePdu({
        command: 'bind_transceiver',
        status: 0,
        sequence: 1,
        fields: {
          system_id: 'x'.repeat(16),
          password: '',
          system_type: '',
          interface_version: 0x34,
          addr_ton: 0,
          addr_npi: 0,
          address_range: '',
        },
        tlvs: [],
      }),
    ).toThrow('system_id is at most 15 characters, got 16');
  });
});

describe('carrier configuration', () => {
  it('routes by the longest prefix, then to the carrier without prefixes', () => {
    const carriers = parseSmppCarriers(
      'smpp://a:p@h1:1?name=uk&prefixes=44 smpp://a:p@h2:2?name=ukm&prefixes=447 smpp://a:p@h3:3?name=rest',
    );
    expect(routeCarrier(carriers, '447400123456')!.name).toBe('ukm');
    expect(routeCarrier(carriers, '442071234567')!.name).toBe('uk');
    expect(routeCarrier(carriers, '14155550100')!.name).toBe('rest');
    expect(routeCarrier(carriers.slice(0, 2), '14155550100')).toBeNull();
  });

  it('lists every carrier that takes a destination, best first, for failover', () => {
    const carriers = parseSmppCarriers(
      'smpp://a:p@h0:1?name=rest smpp://a:p@h1:1?name=uk&prefixes=44 smpp://a:p@h2:2?name=ukm&prefixes=447,1 ' +
        'smpp://a:p@h3:3?name=uk2&prefixes=44 smpp://a:p@h4:4?name=rest2',
    );
    const names = (destination: string) => routeCarriers(carriers, destination).map((c) => c.name);
    expect(names('447400123456')).toEqual(['ukm', 'uk', 'uk2', 'rest', 'rest2']);
    expect(names('442071234567')).toEqual(['uk', 'uk2', 'rest', 'rest2']);
    expect(names('14155550100')).toEqual(['ukm', 'rest', 'rest2']);
    expect(names('33612345678')).toEqual(['rest', 'rest2']);
    expect(routeCarriers(carriers.slice(1, 2), '33612345678')).toEqual([]);
  });

  it('names the parameter a bad value breaks', () => {
    expect(() => parseSmppCarriers('http://x')).toThrow(
      'each carrier URL must have the scheme smpp or ssmpp (TLS)',
    );
    expect(() => parseSmppCarriers('smpp://a:p@h?long=never')).toThrow(
      'long must be one of udh, udh16, sar, payload',
    );
    expect(() => parseSmppCarriers('smpp://a:p@h?speed=9')).toThrow(
      'unknown carrier parameter speed',
    );
    expect(() => parseSmppCarriers('smpp://a:p@h?name=x smpp://b:p@h?name=x')).toThrow(
      'carrier name x is used twice',
    );
  });
});
