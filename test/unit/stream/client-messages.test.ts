import { describe, expect, it } from 'vitest';
import { readClientMessage } from '../../../src/stream/client-messages.js';

/** What a server sends on a stream, read as the stream reads each text frame. */
const STREAM = '5f0e8a9b-2c3d-4e1f-8a7b-6c5d4e3f2a1b';
const read = (message: unknown) =>
  readClientMessage(Buffer.from(JSON.stringify(message)), false, STREAM);
const play = (payload: string) =>
  read({ event: 'playAudio', media: { contentType: 'audio/x-l16', sampleRate: 8000, payload } });

describe('a server message on a stream', () => {
  it('takes base64 as MIME encoders write it, in lines, as well as in one piece', () => {
    const audio = Buffer.alloc(300, 7);
    const oneLine = audio.toString('base64');
    const lines = oneLine.replace(/(.{76})/g, '$1\n');
    expect(lines).toContain('\n');
    for (const payload of [oneLine, lines, `${lines}\r\n`]) {
      const result = play(payload);
      expect(result).toEqual({
        message: { event: 'playAudio', payload: audio, format: { encoding: 'l16', rate: 8000 } },
      });
    }
  });

  it('names what is not base64, and where', () => {
    expect(play('AAAA*AAA')).toEqual({
      error: 'playAudio payload must be base64 but holds "*" at 4',
    });
    expect(play('AA==AA')).toEqual({
      error: 'playAudio payload must be non-empty base64 (its = padding only at the end)',
    });
    expect(play('\n\n')).toMatchObject({ error: expect.stringContaining('non-empty base64') });
  });

  it('quotes at most a hundred characters of a bad value back, however long it was', () => {
    const huge = 'x'.repeat(1 << 20);
    for (const message of [
      { event: huge },
      { event: 'checkpoint', name: 'n', streamId: huge },
      { event: 'playAudio', media: { contentType: huge, sampleRate: 8000, payload: 'AAAA' } },
      {
        event: 'playAudio',
        media: { contentType: 'audio/x-l16', sampleRate: huge, payload: 'AA' },
      },
    ]) {
      const result = read(message);
      expect('error' in result).toBe(true);
      const error = (result as { error: string }).error;
      expect(error.length).toBeLessThan(400);
      // JSON-quoted, but for the streamId, which is named as it came.
      expect(error).toMatch(new RegExp(`\\((${huge.length}|${huge.length + 2}) characters\\)`));
    }
  });
});
