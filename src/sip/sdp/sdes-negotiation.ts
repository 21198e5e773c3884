import {
  formatCrypto,
  parseCrypto,
  SDES_SUITES,
  unusableCrypto,
  type OutgoingCrypto,
  type SdesCrypto,
  type SdesSuite,
} from './sdes-crypto.js';
import { SdpParseError } from './sdp-parse-error.js';
import type { MediaStream } from './session-description.js';

/** A session's SDES side: whether plain RTP is refused, and voxgate's own keys. */
export interface LocalSdes {
  /** Offer RTP/SAVP, and refuse offers and answers of plain RTP/AVP. */
  readonly required: boolean;
  /** voxgate's key || salt for a suite: made once per session, so re-offers keep it. */
  readonly keyFor: (suite: SdesSuite) => Uint8Array;
}

/**
 * What an SDES exchange settled: the suite, and each side's key || salt. The peer's key
 * unprotects what it sends; ours protects what voxgate sends (RFC 4568 6.1).
 */
export interface NegotiatedSdes {
  readonly suite: SdesSuite;
  readonly tag: number;
  readonly remoteKeySalt: Uint8Array;
  readonly localKeySalt: Uint8Array;
}

/**
 * The offered crypto line voxgate answers: RFC 4568 7.1.2 has the answerer take the first
 * line (the offerer's preference) it supports; malformed and unsupported lines are passed
 * over. A string says why none was taken (no key material in it).
 */
export function chooseCrypto(stream: MediaStream): SdesCrypto | string {
  const lines = stream.crypto ?? [];
  if (lines.length === 0) return 'the RTP/SAVP audio stream has no a=crypto line';
  const reasons: string[] = [];
  for (const { value, line } of lines) {
    let crypto: SdesCrypto;
    try {
      crypto = parseCrypto(value, line);
    } catch (error) {
      reasons.push((error as Error).message);
      continue;
    }
    const problem = unusableCrypto(crypto);
    if (problem === null) return crypto;
    reasons.push(`a=crypto:${crypto.tag}: ${problem}`);
  }
  return `no usable a=crypto line (${reasons.join('; ')})`;
}

/** RFC 4568 7.1.2: the answer's one crypto line has the chosen tag and suite, and our key. */
export function answerCrypto(chosen: SdesCrypto, local: LocalSdes) {
  const suite = chosen.suite as SdesSuite;
  const keySalt = local.keyFor(suite);
  const outgoing: OutgoingCrypto = { tag: chosen.tag, suite, keySalt };
  const negotiated: NegotiatedSdes = {
    suite,
    tag: chosen.tag,
    remoteKeySalt: chosen.keySalt,
    localKeySalt: keySalt,
  };
  return { outgoing, negotiated };
}

/** voxgate's offer: one line per suite, its preferred first, tags from 1. */
export function offerCryptos(local: LocalSdes): OutgoingCrypto[] {
  return SDES_SUITES.map((suite, index) => ({
    tag: index + 1,
    suite,
    keySalt: local.keyFor(suite),
  }));
}

/**
 * Reads the crypto line of an answer to our RTP/SAVP offer. RFC 4568 7.1.3: the offerer takes
 * the answer's tag and suite only if it offered them; anything else is an SdpParseError.
 */
export function answeredCrypto(
  offered: readonly OutgoingCrypto[],
  stream: MediaStream,
): NegotiatedSdes {
  const lines = stream.crypto ?? [];
  // RFC 4568 7.1.2: the answer MUST contain exactly one crypto attribute per accepted stream.
  if (lines.length !== 1) {
    throw new SdpParseError(`the answer has ${lines.length} a=crypto lines, not one`);
  }
  const crypto = parseCrypto(lines[0]!.value, lines[0]!.line);
  const ours = offered.find((o) => o.tag === crypto.tag);
  if (ours === undefined || ours.suite !== crypto.suite) {
    throw new SdpParseError(`the answer's a=crypto:${crypto.tag} ${crypto.suite} was not offered`);
  }
  const problem = unusableCrypto(crypto);
  if (problem !== null) throw new SdpParseError(`the answer's a=crypto: ${problem}`);
  return {
    suite: ours.suite,
    tag: crypto.tag,
    remoteKeySalt: crypto.keySalt,
    localKeySalt: ours.keySalt,
  };
}

/** The a=crypto lines of a stream as voxgate writes them. */
export function cryptoLines(crypto: readonly OutgoingCrypto[] | undefined): string[] {
  return (crypto ?? []).map((c) => `a=${formatCrypto(c)}`);
}
