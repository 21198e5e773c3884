/** The methods of RFC 3261 and its extensions (3262, 3265, 3311, 3428, 3515, 3903, 6086). */
export const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'INVITE',
  'ACK',
  'BYE',
  'CANCEL',
  'OPTIONS',
  'REGISTER',
  'PRACK',
  'SUBSCRIBE',
  'NOTIFY',
  'PUBLISH',
  'INFO',
  'REFER',
  'MESSAGE',
  'UPDATE',
]);
