import { expect, it } from 'vitest';
import { recentSigningKeys } from '../../../src/callbacks/recent-signing-keys.js';
import { ManualClock } from '../../../src/core/clock.js';

it('asks the store once a second per account, and never keeps an account it did not find', async () => {
  const clock = new ManualClock(1_000_000);
  const asked: string[] = [];
  const accounts = new Map([['SA1', { accountToken: 'a', mainToken: 'm' }]]);
  const keys = recentSigningKeys(
    {
      keysFor: async (id) => {
        asked.push(id);
        return accounts.get(id) ?? null;
      },
    },
    clock,
  );
  expect(await keys.keysFor('SA1')).toEqual({ accountToken: 'a', mainToken: 'm' });
  clock.advance(999);
  expect(await keys.keysFor('SA1')).toEqual({ accountToken: 'a', mainToken: 'm' });
  expect(asked).toEqual(['SA1']);

  accounts.delete('SA1');
  clock.advance(1);
  expect(await keys.keysFor('SA1')).toBeNull();
  expect(await keys.keysFor('SA2')).toBeNull();
  accounts.set('SA2', { accountToken: 'b', mainToken: 'm' });
  expect(await keys.keysFor('SA2')).toEqual({ accountToken: 'b', mainToken: 'm' });
  expect(asked).toEqual(['SA1', 'SA1', 'SA2', 'SA2']);
});
