import { describe, expect, it } from 'vitest';
import {
  redactCallbackUrl,
  validateCallbackRequest,
  type CallbackRequest,
} from '../../../src/callbacks/callback-request.js';

const valid: CallbackRequest = {
  url: 'https://example.com/status',
  method: 'POST',
  params: { Status: 'sent' },
  accountId: 'SA00000000000000000A',
};

describe('validateCallbackRequest', () => {
  it('fills in the defaults', () => {
    expect(validateCallbackRequest(valid)).toEqual({
      ...valid,
      retryDelaysSeconds: [],
      timeoutMs: 5000,
    });
  });

  it.each<[string, Partial<CallbackRequest> & Record<string, unknown>, RegExp]>([
    ['a relative url', { url: '/status' }, /absolute http or https URL for url/],
    ['another scheme', { url: 'ftp://example.com/x' }, /scheme ftp:/],
    ['another method', { method: 'PUT' as never }, /GET or POST for method but received "PUT"/],
    ['no account', { accountId: '' }, /non-empty string for accountId/],
    ['a number param', { params: { Units: 1 as never } }, /string for params.Units/],
    ['a negative delay', { retryDelaysSeconds: [60, -1] }, /retryDelaysSeconds but received -1/],
    ['a zero timeout', { timeoutMs: 0 }, /between 1 and 120000 for timeoutMs but received 0/],
  ])('refuses %s', (_, change, message) => {
    expect(() => validateCallbackRequest({ ...valid, ...change })).toThrow(message);
  });
});

describe('redactCallbackUrl', () => {
  it('drops credentials and the query string', () => {
    expect(redactCallbackUrl('https://user:pw@example.com:8443/cb?token=x#f')).toBe(
      'https://example.com:8443/cb',
    );
  });
});
