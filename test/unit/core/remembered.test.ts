import { describe, expect, it } from 'vitest';
import { remembered } from '../../../src/core/remembered.js';

describe('remembered', () => {
  it('looks each key up once, falsy answers included', () => {
    const asked: string[] = [];
    const lookup = remembered((key) => {
      asked.push(key);
      return key === 'yes' ? 'Y' : '';
    }, 10);
    expect([lookup('yes'), lookup('no'), lookup('yes'), lookup('no')]).toEqual(['Y', '', 'Y', '']);
    expect(asked).toEqual(['yes', 'no']);
  });

  it('starts afresh when full, and still answers right', () => {
    const asked: string[] = [];
    const lookup = remembered((key) => {
      asked.push(key);
      return key.length;
    }, 2);
    expect([lookup('a'), lookup('bb'), lookup('ccc'), lookup('a')]).toEqual([1, 2, 3, 1]);
    expect(asked).toEqual(['a', 'bb', 'ccc', 'a']);
  });
});
