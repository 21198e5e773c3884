import { describe, expect, it } from 'vitest';
import {
  authorizationOf,
  basicCredentials,
  bearerToken,
} from '../../../src/core/authorization-header.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('authorization headers', () => {
  it('reads the scheme in any case, lower-cased, and what follows it', () => {
    expect(authorizationOf('BeArEr abc.def')).toEqual({ scheme: 'bearer', credentials: 'abc.def' });
    expect(authorizationOf('Negotiate')).toEqual({ scheme: 'negotiate', credentials: '' });
    expect(authorizationOf('Digest a="b", c=d')).toEqual({
      scheme: 'digest',
      credentials: 'a="b", c=d',
    });
    expect(authorizationOf(undefined)).toBeNull();
    expect(authorizationOf('')).toBeNull();
    expect(authorizationOf('"quoted" x')).toBeNull();
  });

  it('reads Basic credentials whatever the case of the scheme', () => {
    for (const scheme of ['Basic', 'basic', 'BASIC'])
      expect(basicCredentials(`${scheme} ${b64('MA1:tok:en')}`)).toEqual({
        user: 'MA1',
        password: 'tok:en',
      });
    expect(basicCredentials(`Basic  ${b64('ü:pass')}  `)).toEqual({ user: 'ü', password: 'pass' });
  });

  it('finds no Basic credentials in another scheme, bad base64 or a user id without a colon', () => {
    expect(basicCredentials(`Bearer ${b64('a:b')}`)).toBeNull();
    expect(basicCredentials('Basic not*base64')).toBeNull();
    expect(basicCredentials(`Basic ${b64('no-colon')}`)).toBeNull();
    expect(basicCredentials(`Basic ${b64(':empty-user')}`)).toBeNull();
    expect(basicCredentials('Basic')).toBeNull();
  });

  it('reads a Bearer token whatever the case of the scheme', () => {
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('BEARER abc')).toBe('abc');
    expect(bearerToken('Bearer')).toBeNull();
    expect(bearerToken('Basic abc')).toBeNull();
  });
});
