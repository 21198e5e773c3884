import { describe, expect, it } from 'vitest';
import { redactSipSecrets } from '../../../src/call/sip-trace.js';

describe('redactSipSecrets', () => {
  it('replaces digest credentials and SDES keys, keeping the rest of the message', () => {
    const key = Buffer.alloc(30, 7).toString('base64');
    const message = [
      'INVITE sip:bob@192.0.2.1 SIP/2.0',
      'Authorization: Digest username="alice", response="abc"',
      '',
      'm=audio 4000 RTP/SAVP 0',
      `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}|2^20|1:4`,
      `a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:${key}`,
    ].join('\r\n');
    const traced = redactSipSecrets(message);
    expect(traced).not.toContain(key);
    expect(traced.split('\r\n')).toEqual([
      'INVITE sip:bob@192.0.2.1 SIP/2.0',
      'Authorization: <redacted>',
      '',
      'm=audio 4000 RTP/SAVP 0',
      'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:<redacted>|2^20|1:4',
      'a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:<redacted>',
    ]);
  });
});
