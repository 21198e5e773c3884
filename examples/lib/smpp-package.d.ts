// The `smpp` package ships no types; the SMSC (smsc-server.ts) uses a small part of it.
/* eslint-disable no-restricted-syntax, @typescript-eslint/no-explicit-any */
declare module 'smpp' {
  const smpp: any;
  export default smpp;
}
declare module 'smpp/lib/defs.js' {
  const defs: any;
  export default defs;
}
