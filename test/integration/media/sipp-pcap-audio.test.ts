import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { aLawDecode } from '../../../src/media/codec/g711.js';
import { energyDbfs } from '../../../src/media/codec/pcm-frame.js';
import { readPcapRtp } from '../../support/pcap.js';

/**
 * The A-law call audio SIPp ships for play_pcap_audio, decoded by the native addon, is the
 * audio an independent decoder (ffmpeg) hears in the same payloads, sample for sample.
 */
describe('SIPp g711a.pcap', () => {
  it('decodes to the same audio as ffmpeg, in sequence, and not silence', () => {
    const packets = readPcapRtp('/usr/share/sip-tester/g711a.pcap');
    expect(packets.length).toBeGreaterThan(100);
    expect(new Set(packets.map((p) => p.payloadType))).toEqual(new Set([8]));
    for (let i = 1; i < packets.length; i++) {
      expect((packets[i]!.sequenceNumber - packets[i - 1]!.sequenceNumber) & 0xffff).toBe(1);
    }
    const codes = Buffer.concat(packets.map((p) => p.payload));
    const ours = aLawDecode(codes);
    const theirs = execFileSync(
      'ffmpeg',
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-f',
        'alaw',
        '-ar',
        '8000',
        '-ac',
        '1',
        '-i',
        'pipe:0',
        '-f',
        's16le',
        'pipe:1',
      ],
      { input: codes },
    );
    const reference = new Int16Array(theirs.length >> 1);
    for (let i = 0; i < reference.length; i++) reference[i] = theirs.readInt16LE(i * 2);
    expect(ours.length).toBe(reference.length);
    expect(Buffer.from(ours.buffer, ours.byteOffset, ours.byteLength).equals(theirs)).toBe(true);
    expect(energyDbfs(ours)).toBeGreaterThan(-40);
  });
});
