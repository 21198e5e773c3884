import { describe, expect, it } from 'vitest';
import { isWellFormedDtlsDatagram } from '../../../../src/media/dtls/dtls-records.js';

/** A record: type, DTLS 1.2, epoch, sequence number 0, length, body. */
function record(type: number, epoch: number, body: number[], version = 0xfefd): Buffer {
  const header = Buffer.alloc(13);
  header[0] = type;
  header.writeUInt16BE(version, 1);
  header.writeUInt16BE(epoch, 3);
  header.writeUInt16BE(body.length, 11);
  return Buffer.concat([header, Buffer.from(body)]);
}

describe('isWellFormedDtlsDatagram', () => {
  it('takes whole records, several to a datagram, in DTLS 1.0 or 1.2', () => {
    const hello = record(22, 0, Array(40).fill(1), 0xfeff);
    const ccs = record(20, 0, [1]);
    const finished = record(22, 1, Array(48).fill(9));
    expect(isWellFormedDtlsDatagram(hello)).toBe(true);
    expect(isWellFormedDtlsDatagram(Buffer.concat([ccs, finished]))).toBe(true);
    expect(isWellFormedDtlsDatagram(record(21, 0, [2, 42]))).toBe(true);
    expect(isWellFormedDtlsDatagram(record(23, 1, [5, 6, 7]))).toBe(true);
  });

  it('refuses what DTLS would discard and OpenSSL would fail on', () => {
    const refused = [
      Buffer.from([22, 0xfe, 0xfd]),
      record(24, 0, [1]),
      record(22, 0, [1], 0x0303),
      record(22, 0, Array(40).fill(1)).subarray(0, 30),
      Buffer.concat([record(22, 0, [1, 2]), Buffer.from([22, 0xfe])]),
      record(20, 0, [2]),
      record(20, 0, [1, 1]),
      record(21, 0, [2]),
      record(23, 0, [1, 2, 3]),
    ];
    expect(refused.map(isWellFormedDtlsDatagram)).toEqual(refused.map(() => false));
  });
});
