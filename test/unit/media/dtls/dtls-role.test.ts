import { describe, expect, it } from 'vitest';
import { answerSetup, dtlsRoleOf, OFFER_SETUP } from '../../../../src/media/dtls/dtls-role.js';

describe('a=setup and the DTLS role (RFC 5763 5, RFC 4145 4.1)', () => {
  it('offers actpass and answers active to actpass, the opposite otherwise', () => {
    expect(OFFER_SETUP).toBe('actpass');
    expect(answerSetup('actpass')).toBe('active');
    expect(answerSetup('passive')).toBe('active');
    expect(answerSetup('active')).toBe('passive');
  });

  it('makes the active side the client', () => {
    expect(dtlsRoleOf('active')).toBe('client');
    expect(dtlsRoleOf('passive')).toBe('server');
  });
});
