import { parseCandidate, type SdpCandidate } from './ice-candidate.js';
import { SdpParseError } from './sdp-parse-error.js';

/** A certificate fingerprint (RFC 8122 5): `sha-256` and colon-separated upper-case hex. */
export interface DtlsFingerprint {
  readonly algorithm: string;
  readonly value: string;
}

/** RFC 4145 4: who opens the DTLS association. */
export type DtlsSetup = 'active' | 'passive' | 'actpass' | 'holdconn';

/**
 * The transport attributes WebRTC adds to an m= section or the session (ICE: RFC 8839, DTLS:
 * RFC 8842 and 8122, BUNDLE: RFC 8843, rtcp-mux: RFC 5761), as written at one level.
 */
export interface TransportLines {
  /** True once any of the attributes below was read. */
  seen: boolean;
  mid: string | null;
  rtcpMux: boolean;
  iceUfrag: string | null;
  icePwd: string | null;
  iceOptions: string[];
  iceLite: boolean;
  candidates: SdpCandidate[];
  endOfCandidates: boolean;
  fingerprints: DtlsFingerprint[];
  setup: DtlsSetup | null;
  /** a=group lines (session level): the semantics and their mids. */
  groups: { semantics: string; mids: string[] }[];
}

export function emptyTransportLines(): TransportLines {
  return {
    seen: false,
    mid: null,
    rtcpMux: false,
    iceUfrag: null,
    icePwd: null,
    iceOptions: [],
    iceLite: false,
    candidates: [],
    endOfCandidates: false,
    fingerprints: [],
    setup: null,
    groups: [],
  };
}

/** RFC 8839 5.4: ice-char = ALPHA / DIGIT / "+" / "/"; a ufrag of 4-256, a pwd of 22-256. */
const ICE_UFRAG = /^[A-Za-z0-9+/]{4,256}$/;
const ICE_PWD = /^[A-Za-z0-9+/]{22,256}$/;
const FINGERPRINT = /^fingerprint:(\S+) ((?:[0-9A-Fa-f]{2}:)*[0-9A-Fa-f]{2})$/;
const SETUPS: readonly string[] = ['active', 'passive', 'actpass', 'holdconn'];
const TOKEN = /^[!#$%&'*+\-.0-9A-Z^_`a-z{|}~]+$/;

function nameAndValue(value: string): [string, string] {
  const colon = value.indexOf(':');
  return colon < 0
    ? [value.trimEnd(), '']
    : [value.slice(0, colon), value.slice(colon + 1).trimEnd()];
}

/**
 * Reads an a= value if it is a transport attribute, into `into`; returns false for any other
 * attribute. Malformed values throw an SdpParseError naming the line.
 */
export function readTransportAttribute(value: string, line: number, into: TransportLines): boolean {
  const [name, text] = nameAndValue(value);
  switch (name) {
    case 'mid':
      if (!TOKEN.test(text)) throw new SdpParseError('a=mid must be a token', line);
      into.mid = text;
      break;
    case 'rtcp-mux':
      into.rtcpMux = true;
      break;
    case 'ice-ufrag':
      if (!ICE_UFRAG.test(text))
        throw new SdpParseError('a=ice-ufrag must be 4 to 256 ice-chars', line);
      into.iceUfrag = text;
      break;
    case 'ice-pwd':
      if (!ICE_PWD.test(text))
        throw new SdpParseError('a=ice-pwd must be 22 to 256 ice-chars', line);
      into.icePwd = text;
      break;
    case 'ice-options':
      into.iceOptions.push(...text.split(' ').filter(Boolean));
      break;
    case 'ice-lite':
      into.iceLite = true;
      break;
    case 'candidate':
      into.candidates.push(parseCandidate(value, line));
      break;
    case 'end-of-candidates':
      into.endOfCandidates = true;
      break;
    case 'fingerprint': {
      const match = FINGERPRINT.exec(value.trimEnd());
      if (match === null) {
        throw new SdpParseError('a=fingerprint must be "<hash function> <hex>:<hex>..."', line);
      }
      into.fingerprints.push({
        algorithm: match[1]!.toLowerCase(),
        value: match[2]!.toUpperCase(),
      });
      break;
    }
    case 'setup':
      if (!SETUPS.includes(text)) {
        throw new SdpParseError('a=setup must be active, passive, actpass or holdconn', line);
      }
      into.setup = text as DtlsSetup;
      break;
    case 'group': {
      const [semantics = '', ...mids] = text.split(' ').filter(Boolean);
      into.groups.push({ semantics, mids });
      break;
    }
    default:
      return false;
  }
  into.seen = true;
  return true;
}
