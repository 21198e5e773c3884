/** The direction attribute of a media stream (RFC 4566 6, RFC 3264 5.1). */
export type MediaDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export const MEDIA_DIRECTIONS: readonly MediaDirection[] = [
  'sendrecv',
  'sendonly',
  'recvonly',
  'inactive',
];

export function isMediaDirection(value: string): value is MediaDirection {
  return (MEDIA_DIRECTIONS as readonly string[]).includes(value);
}

export function sends(direction: MediaDirection): boolean {
  return direction === 'sendrecv' || direction === 'sendonly';
}

export function receives(direction: MediaDirection): boolean {
  return direction === 'sendrecv' || direction === 'recvonly';
}

function fromFlags(send: boolean, receive: boolean): MediaDirection {
  if (send && receive) return 'sendrecv';
  if (send) return 'sendonly';
  if (receive) return 'recvonly';
  return 'inactive';
}

/**
 * The direction the answerer takes, seen from its side, for a stream offered with `offered`.
 * RFC 3264 6.1: a sendonly stream is answered recvonly (or inactive), a recvonly one sendonly
 * (or inactive), an inactive one inactive; `wanted` narrows a sendrecv offer further.
 */
export function answerDirection(offered: MediaDirection, wanted: MediaDirection): MediaDirection {
  return fromFlags(receives(offered) && sends(wanted), sends(offered) && receives(wanted));
}

/** The same direction seen from the other end of the stream. */
export function reverseDirection(direction: MediaDirection): MediaDirection {
  return fromFlags(receives(direction), sends(direction));
}
