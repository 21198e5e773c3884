import { describe, expect, it } from 'vitest';
import {
  AUTH_TOKEN_ENV,
  describeTarget,
  readGatewayTarget,
  targetLines,
} from '../../../bench/api/gateway-target.js';

const TOKEN = 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdo';

describe('readGatewayTarget', () => {
  it('is null without --gateway-url: the local run', () => {
    expect(readGatewayTarget({}, {})).toBeNull();
  });

  it('refuses a target flag without --gateway-url', () => {
    expect(() => readGatewayTarget({ sip: '10.0.0.5:5060' }, {})).toThrow(
      '--sip applies to a gateway named by --gateway-url',
    );
  });

  it('reads the flags, with the token from the environment', () => {
    const target = readGatewayTarget(
      {
        'gateway-url': 'http://10.0.0.5:8080/',
        'auth-id': 'MAXXXXXXXXXXXXXXXXXX',
        sip: '10.0.0.5:5070',
        'listen-host': '10.0.0.9',
      },
      { [AUTH_TOKEN_ENV]: TOKEN },
    );
    expect(target).toEqual({
      gatewayUrl: 'http://10.0.0.5:8080',
      authId: 'MAXXXXXXXXXXXXXXXXXX',
      authToken: TOKEN,
      sip: { host: '10.0.0.5', port: 5070 },
      listenHost: '10.0.0.9',
    });
  });

  it('takes the SIP host from the URL on port 5060, and listens on loopback, by default', () => {
    const target = readGatewayTarget(
      { 'gateway-url': 'http://gw.example:8080/base/' },
      { VOXGATE_BENCH_AUTH_ID: 'MA1', [AUTH_TOKEN_ENV]: TOKEN },
    );
    expect(target).toMatchObject({
      gatewayUrl: 'http://gw.example:8080/base',
      authId: 'MA1',
      sip: { host: 'gw.example', port: 5060 },
      listenHost: '127.0.0.1',
    });
  });

  it('prefers the flags to the environment', () => {
    const target = readGatewayTarget(
      { 'gateway-url': 'http://10.0.0.5:8080', 'auth-id': 'MA1', 'auth-token': 'flag' },
      { VOXGATE_BENCH_AUTH_ID: 'MA2', [AUTH_TOKEN_ENV]: 'env' },
    );
    expect(target).toMatchObject({ authId: 'MA1', authToken: 'flag' });
  });

  it('asks for missing credentials without printing any', () => {
    expect(() => readGatewayTarget({ 'gateway-url': 'http://10.0.0.5:8080' }, {})).toThrow(
      '--auth-id or VOXGATE_BENCH_AUTH_ID',
    );
    expect(() =>
      readGatewayTarget({ 'gateway-url': 'http://10.0.0.5:8080', 'auth-id': 'MA1' }, {}),
    ).toThrow(`${AUTH_TOKEN_ENV} or --auth-token`);
  });

  it('refuses credentials in the URL, and https', () => {
    const env = { VOXGATE_BENCH_AUTH_ID: 'MA1', [AUTH_TOKEN_ENV]: TOKEN };
    const error = (() => {
      try {
        readGatewayTarget({ 'gateway-url': `http://MA1:${TOKEN}@10.0.0.5:8080` }, env);
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(error).toContain('without credentials');
    expect(error).not.toContain(TOKEN);
    expect(() => readGatewayTarget({ 'gateway-url': 'https://10.0.0.5' }, env)).toThrow(
      'http:// URL',
    );
    expect(() => readGatewayTarget({ 'gateway-url': 'not a url' }, env)).toThrow('http:// URL');
  });

  it('refuses a listen host that is not an IPv4 address, and a malformed SIP address', () => {
    const base = { 'gateway-url': 'http://10.0.0.5:8080', 'auth-id': 'MA1', 'auth-token': 'x' };
    expect(() => readGatewayTarget({ ...base, 'listen-host': '0.0.0.0' }, {})).toThrow(
      '--listen-host',
    );
    expect(() => readGatewayTarget({ ...base, 'listen-host': 'bench.example' }, {})).toThrow(
      '--listen-host',
    );
    expect(() => readGatewayTarget({ ...base, sip: '10.0.0.5:70000' }, {})).toThrow('--sip');
    expect(() => readGatewayTarget({ ...base, sip: '[::1]:5060' }, {})).toThrow('--sip');
  });
});

describe('describeTarget', () => {
  it('records where and how, never the token', () => {
    const target = readGatewayTarget(
      { 'gateway-url': 'http://10.0.0.5:8080', 'auth-id': 'MA1', 'auth-token': TOKEN },
      {},
    )!;
    const record = describeTarget(
      target,
      { from: 'metrics', detail: 'voxgate_process_cpu_seconds_total' },
      [{ what: 'the gateway log', reason: 'not the bench' }],
    );
    expect(record).toEqual({
      gatewayUrl: 'http://10.0.0.5:8080',
      sip: '10.0.0.5:5060',
      listenHost: '127.0.0.1',
      cpuFrom: 'metrics',
      cpu: 'voxgate_process_cpu_seconds_total',
      skipped: [{ what: 'the gateway log', reason: 'not the bench' }],
    });
    expect(JSON.stringify(record)).not.toContain(TOKEN);
    expect(targetLines(record).join('\n')).not.toContain(TOKEN);
    expect(targetLines(record)).toContain('skipped: the gateway log: not the bench');
  });
});
