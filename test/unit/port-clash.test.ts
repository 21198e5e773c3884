import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { describeBindFailure } from '../../src/port-clash.js';

const config = (env: Record<string, string> = {}) =>
  loadConfig({ VOXGATE_DATA_DIR: '', VOXGATE_HTTP_HOST: '127.0.0.1', ...env });

/** An error as Node gives it for a listen (TCP) or bind (UDP) that failed. */
const failure = (code: string, syscall: 'listen' | 'bind', port: number) =>
  Object.assign(new Error(`${syscall} ${code} 127.0.0.1:${port}`), {
    code,
    syscall,
    address: '127.0.0.1',
    port,
  });

describe('describeBindFailure', () => {
  it('names the setting of the listener whose port is in use', () => {
    const c = config({ VOXGATE_HTTP_PORT: '8081', VOXGATE_SIP_PORT: '5070' });
    expect(describeBindFailure(c, failure('EADDRINUSE', 'listen', 8081))).toBe(
      'port 8081 is in use (VOXGATE_HTTP_PORT)',
    );
    expect(describeBindFailure(c, failure('EADDRINUSE', 'bind', 5070))).toBe(
      'port 5070 is in use (VOXGATE_SIP_PORT)',
    );
    expect(describeBindFailure(c, failure('EADDRINUSE', 'listen', 5066))).toBe(
      'port 5066 is in use (VOXGATE_SIP_WS_PORT)',
    );
  });

  it('names the TLS port when TLS is configured', () => {
    const c = config({
      VOXGATE_SIP_TLS_CERT: '/cert.pem',
      VOXGATE_SIP_TLS_KEY: '/key.pem',
      VOXGATE_SIP_TLS_PORT: '5063',
    });
    expect(describeBindFailure(c, failure('EADDRINUSE', 'listen', 5063))).toBe(
      'port 5063 is in use (VOXGATE_SIP_TLS_PORT)',
    );
  });

  it('says when two settings ask for one port', () => {
    const c = config({ VOXGATE_HTTP_PORT: '9000', VOXGATE_SIP_WS_PORT: '9000' });
    expect(describeBindFailure(c, failure('EADDRINUSE', 'listen', 9000))).toBe(
      'port 9000 is in use (VOXGATE_HTTP_PORT, VOXGATE_SIP_WS_PORT); VOXGATE_HTTP_PORT, ' +
        'VOXGATE_SIP_WS_PORT all ask for it: give each a port of its own',
    );
  });

  it('names a privileged port and an address not of this machine', () => {
    const c = config({ VOXGATE_HTTP_PORT: '80', VOXGATE_SIP_HOST: '192.0.2.1' });
    expect(describeBindFailure(c, failure('EACCES', 'listen', 80))).toBe(
      'port 80 may not be bound by this user (VOXGATE_HTTP_PORT): ports below 1024 need root ' +
        'or CAP_NET_BIND_SERVICE',
    );
    const elsewhere = { ...failure('EADDRNOTAVAIL', 'bind', 5060), address: '192.0.2.1' };
    expect(describeBindFailure(c, elsewhere)).toBe(
      '192.0.2.1 is not an address of this machine (VOXGATE_SIP_HOST)',
    );
  });

  it('leaves any other error alone', () => {
    const c = config();
    expect(describeBindFailure(c, new Error('boom'))).toBeNull();
    expect(describeBindFailure(c, failure('EADDRINUSE', 'listen', 4444))).toBeNull();
    expect(describeBindFailure(c, undefined)).toBeNull();
  });
});
