// The package ships no types: ioredis's own slot function, CRC16 of the key (or of its hash tag)
// modulo 16384.
declare module 'cluster-key-slot' {
  // eslint-disable-next-line no-restricted-syntax -- the CommonJS export is the function itself
  export default function calculateSlot(key: string | Buffer): number;
}
