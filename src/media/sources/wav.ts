/** PCM audio: mono 16-bit samples at a rate. */
export interface Pcm {
  rate: number;
  samples: Int16Array;
}

/**
 * Reads a RIFF/WAVE file of 16-bit PCM (format 1), mono, or several channels down-mixed to
 * mono. A data chunk whose size is unset (0 or 0xFFFFFFFF, as a stream writer leaves it)
 * runs to the end of the file.
 */
export function readWav(data: Buffer): Pcm {
  if (
    data.length < 12 ||
    data.toString('latin1', 0, 4) !== 'RIFF' ||
    data.toString('latin1', 8, 12) !== 'WAVE'
  ) {
    throw new Error('Expected a RIFF/WAVE file');
  }
  let at = 12;
  let format: { channels: number; rate: number; bits: number; tag: number } | null = null;
  while (at + 8 <= data.length) {
    const id = data.toString('latin1', at, at + 4);
    let size = data.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ') {
      if (size < 16) throw new Error('Expected a WAVE fmt chunk of at least 16 octets');
      format = {
        tag: data.readUInt16LE(body),
        channels: data.readUInt16LE(body + 2),
        rate: data.readUInt32LE(body + 4),
        bits: data.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!format) throw new Error('Expected the WAVE fmt chunk before the data chunk');
      if (format.tag !== 1 || format.bits !== 16) {
        throw new Error(
          `Expected 16-bit PCM but the WAVE file holds format ${format.tag}, ${format.bits} bits`,
        );
      }
      if (size === 0 || size === 0xffffffff || body + size > data.length) size = data.length - body;
      return {
        rate: format.rate,
        samples: toMono(data.subarray(body, body + size), format.channels),
      };
    }
    at = body + size + (size % 2);
  }
  throw new Error('Expected a data chunk in the WAVE file');
}

function toMono(octets: Buffer, channels: number): Int16Array {
  const frames = Math.floor(octets.length / (2 * channels));
  const out = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += octets.readInt16LE((i * channels + c) * 2);
    out[i] = Math.round(sum / channels);
  }
  return out;
}
