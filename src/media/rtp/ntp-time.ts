/** Seconds from 1900-01-01 (NTP's epoch) to 1970-01-01 (Unix's). */
const NTP_UNIX_OFFSET = 2_208_988_800;

export interface NtpTimestamp {
  seconds: number;
  fraction: number;
}

/** A 64-bit NTP timestamp (RFC 3550 4) as two 32-bit halves. */
export function ntpFromUnixMs(ms: number): NtpTimestamp {
  const wholeSeconds = Math.floor(ms / 1000);
  const fraction = Math.floor(((ms - wholeSeconds * 1000) / 1000) * 2 ** 32);
  return { seconds: (wholeSeconds + NTP_UNIX_OFFSET) >>> 0, fraction: fraction >>> 0 };
}

/** The middle 32 bits of an NTP timestamp, which LSR carries (RFC 3550 6.4.1). */
export const ntpMiddle = (ntp: NtpTimestamp): number =>
  (((ntp.seconds & 0xffff) << 16) | (ntp.fraction >>> 16)) >>> 0;
