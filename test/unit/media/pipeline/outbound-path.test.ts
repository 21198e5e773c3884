import { describe, expect, it } from 'vitest';
import { decodeTelephoneEvent } from '../../../../src/media/dtmf/index.js';
import { OutboundPath, type OutboundItem } from '../../../../src/media/pipeline/outbound-path.js';
import { PcmSource } from '../../../../src/media/playout/playout-source.js';
import { powerAt, tone } from '../../../support/signal.js';

const ticks = (path: OutboundPath, n: number): OutboundItem[] =>
  Array.from({ length: n }, () => path.next());

describe('OutboundPath', () => {
  it('sends playout audio, and RFC 4733 events in place of it while a digit goes out', async () => {
    const path = new OutboundPath({ rate: 8000, telephoneEventRate: 8000 });
    path.playout.play(new PcmSource(tone(8000, 440, 10, 5000)));
    const done = path.sendDigits('4W5', { toneMs: 60 });
    const items = ticks(path, 80);
    const kinds = items.map((i) =>
      i.kind === 'event' ? decodeTelephoneEvent(i.packet.payload).event : '.',
    );
    // 60 ms: two updates then three ends; the 100 ms gap and a 1 s wait put the second digit
    // at 1160 ms (tick 58).
    expect(kinds.slice(0, 6).join('')).toBe('44444.');
    expect(kinds.slice(6, 58).every((k) => k === '.')).toBe(true);
    expect(kinds.slice(58, 64).join('')).toBe('55555.');
    expect(await done).toBe(true);
    const audio = items.find((i) => i.kind === 'audio');
    expect(audio?.kind === 'audio' && audio.pcm.length).toBe(160);
  });

  it('sends the tones themselves when the peer has no telephone-event', () => {
    const path = new OutboundPath({ rate: 16000, telephoneEventRate: null });
    void path.sendDigits('#');
    const items = ticks(path, 7);
    const pcm = items[0]!.kind === 'audio' ? items[0]!.pcm : new Int16Array();
    expect(pcm.length).toBe(320);
    // # is 941 Hz with 1477 Hz.
    expect(powerAt(pcm, 16000, 941)).toBeGreaterThan(100 * powerAt(pcm, 16000, 697));
    expect(powerAt(pcm, 16000, 1477)).toBeGreaterThan(100 * powerAt(pcm, 16000, 1209));
    const after = items[6]!.kind === 'audio' ? items[6]!.pcm : new Int16Array([1]);
    expect(after.every((v) => v === 0)).toBe(true);
  });

  it('resolves stopped digit strings false, and names a bad character', async () => {
    const path = new OutboundPath({ rate: 8000, telephoneEventRate: 8000 });
    const pending = path.sendDigits('123');
    path.next();
    path.stopDigits();
    expect(await pending).toBe(false);
    expect(() => path.sendDigits('1x')).toThrow(/x/);
  });
});
