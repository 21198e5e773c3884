/** What a peer's Opus fmtp says about how it receives and sends (RFC 7587 6.1, 7.1). */
export interface OpusParameters {
  /** The highest rate it plays audio at (maxplaybackrate); 48000 when not given. */
  readonly maxPlaybackRate: number;
  /** The highest rate it captures audio at (sprop-maxcapturerate); 48000 when not given. */
  readonly maxCaptureRate: number;
  /** The most bit/s it wants to receive (maxaveragebitrate), null when not given. */
  readonly maxAverageBitrate: number | null;
  /** It prefers to receive stereo (stereo=1); voxgate sends mono all the same. */
  readonly stereo: boolean;
  /** Its decoder uses in-band FEC (useinbandfec=1). */
  readonly useInbandFec: boolean;
  /** It prefers DTX (usedtx=1). */
  readonly useDtx: boolean;
}

function positive(value: string | undefined, fallback: number): number {
  const n = value === undefined ? NaN : Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/**
 * Reads an Opus fmtp ("minptime=10;useinbandfec=1"). RFC 7587 6.1: parameters it does not
 * know, and values that do not read, are ignored; each absent one takes its default.
 */
export function parseOpusParameters(fmtp: string | null): OpusParameters {
  const values = new Map<string, string>();
  for (const part of (fmtp ?? '').split(';')) {
    const [name, value] = part.split('=').map((token) => token.trim());
    if (name && value !== undefined) values.set(name.toLowerCase(), value);
  }
  const bitrate = positive(values.get('maxaveragebitrate'), 0);
  return {
    maxPlaybackRate: positive(values.get('maxplaybackrate'), 48000),
    maxCaptureRate: positive(values.get('sprop-maxcapturerate'), 48000),
    maxAverageBitrate: bitrate === 0 ? null : bitrate,
    stereo: values.get('stereo') === '1',
    useInbandFec: values.get('useinbandfec') === '1',
    useDtx: values.get('usedtx') === '1',
  };
}
