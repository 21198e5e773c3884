/**
 * RFC 6347 4.1, each record of a datagram:
 *
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   |  ContentType  |    ProtocolVersion            |    epoch ...   |
 *   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   |...            |           sequence_number (48 bits) ...        |
 *   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   |                ...            |            length              |
 *   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   |                     fragment (length bytes) ...
 *
 * A datagram may hold several records, back to back.
 */
const HEADER = 13;
const CHANGE_CIPHER_SPEC = 20;
const ALERT = 21;
const APPLICATION_DATA = 23;
const DTLS_1_0 = 0xfeff;
const DTLS_1_2 = 0xfefd;
/** RFC 6347 4.1 (after RFC 5246 6.2.3): a fragment is at most 2^14 + 2048 bytes. */
const MAX_FRAGMENT = 16384 + 2048;

/**
 * Whether every record of a datagram is well formed; one that is not is to be dropped whole
 * before OpenSSL sees it. RFC 6347 4.1.2.7: "Invalid records SHOULD be silently discarded";
 * OpenSSL instead fails the handshake on a plaintext ChangeCipherSpec other than the one byte 1,
 * on a plaintext alert other than two bytes and on plaintext application data (never valid:
 * epoch 0 has no protection), which anyone able to reach the port could send. Whether a
 * well-formed record is right for the handshake stays OpenSSL's to judge.
 */
export function isWellFormedDtlsDatagram(datagram: Uint8Array): boolean {
  let at = 0;
  if (datagram.length < HEADER) return false;
  while (at < datagram.length) {
    if (datagram.length - at < HEADER) return false;
    const type = datagram[at]!;
    const version = (datagram[at + 1]! << 8) | datagram[at + 2]!;
    const epoch = (datagram[at + 3]! << 8) | datagram[at + 4]!;
    const length = (datagram[at + 11]! << 8) | datagram[at + 12]!;
    const fragment = at + HEADER;
    if (type < CHANGE_CIPHER_SPEC || type > APPLICATION_DATA) return false;
    if (version !== DTLS_1_2 && version !== DTLS_1_0) return false;
    if (length > MAX_FRAGMENT || fragment + length > datagram.length) return false;
    if (epoch === 0 && type === CHANGE_CIPHER_SPEC && (length !== 1 || datagram[fragment] !== 1))
      return false;
    if (epoch === 0 && type === ALERT && length !== 2) return false;
    if (epoch === 0 && type === APPLICATION_DATA) return false;
    at = fragment + length;
  }
  return true;
}
