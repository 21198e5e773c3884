import { describe, expect, it } from 'vitest';
import {
  HTTP_PROTOCOLS,
  isAbsoluteUrl,
  MAX_URL_LENGTH,
  WEBSOCKET_PROTOCOLS,
} from '../../../src/core/absolute-url.js';

describe('isAbsoluteUrl', () => {
  it.each([
    'https://example.com',
    'HTTP://Example.com/a?b=c#d',
    'http://[::1]/answer',
    'http://[::1]:8080/answer',
    'http://user:secret@127.0.0.1:9000/a',
    'http://xn--bcher-kva.example/',
    'http://bücher.example/',
  ])('takes %s', (url) => {
    expect(isAbsoluteUrl(url, HTTP_PROTOCOLS)).toBe(true);
  });

  it.each([
    ['an unclosed IPv6 literal', 'http://[::1'],
    ['an empty authority', 'http:///x'],
    ['no authority at all', 'http:x'],
    ['userinfo without a host', 'http://user@/x'],
    ['a port without a host', 'http://:80/'],
    ['a port out of range', 'http://x:99999/'],
    ['a space in the host', 'http://a b/'],
    ['a leading space', ' http://example.com/'],
    ['a tab inside', 'http://exam\tple.com/'],
    ['another scheme', 'ftp://example.com/'],
    ['a relative reference', '/answer'],
    ['nothing', ''],
  ])('refuses %s', (_what, url) => {
    expect(isAbsoluteUrl(url, HTTP_PROTOCOLS)).toBe(false);
  });

  it('refuses a URL longer than the limit and takes one at it', () => {
    const at = `http://e.com/${'a'.repeat(MAX_URL_LENGTH - 'http://e.com/'.length)}`;
    expect(isAbsoluteUrl(at, HTTP_PROTOCOLS)).toBe(true);
    expect(isAbsoluteUrl(`${at}a`, HTTP_PROTOCOLS)).toBe(false);
  });

  it('takes only the schemes asked for', () => {
    expect(isAbsoluteUrl('wss://example.com/s', WEBSOCKET_PROTOCOLS)).toBe(true);
    expect(isAbsoluteUrl('wss://example.com/s', HTTP_PROTOCOLS)).toBe(false);
    expect(isAbsoluteUrl('https://example.com/s', WEBSOCKET_PROTOCOLS)).toBe(false);
    expect(isAbsoluteUrl('ws:///s', WEBSOCKET_PROTOCOLS)).toBe(false);
  });
});
