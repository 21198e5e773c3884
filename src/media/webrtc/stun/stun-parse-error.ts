/**
 * A datagram that is not a well-formed STUN message (RFC 8489 6.3: such a message is
 * discarded). `reason` names what was wrong, for a counter label or a debug line.
 */
export class StunParseError extends Error {
  constructor(readonly reason: string) {
    super(`not a STUN message: ${reason}`);
    this.name = 'StunParseError';
  }
}
