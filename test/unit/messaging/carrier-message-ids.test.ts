import { expect, it } from 'vitest';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import {
  CARRIER_ID_RETENTION_MS,
  CarrierMessageIds,
} from '../../../src/messaging/carrier-message-ids.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';

const ref = (part: number) => ({ account: 'MA1', message_uuid: 'u1', part });

it('finds an id in any form the carrier writes it, until the receipt or the retention ends it', async () => {
  const time = new ManualScheduler(Date.UTC(2026, 10, 25));
  const store = new EmbeddedStore(null);
  await new CarrierMessageIds(store, time).remember('c', '0A1b', ref(0));
  time.advance(1000);
  await new CarrierMessageIds(store, time).remember('c', '2f', ref(1));
  // Another instance (after a restart) reads the store, not the memory of the first.
  const ids = new CarrierMessageIds(store, time);
  expect(await ids.find('c', '000A1B')).toEqual(ref(0));
  expect(await ids.find('c', String(0x2f))).toEqual(ref(1));
  expect(await ids.find('other', '2f')).toBeNull();

  time.advance(CARRIER_ID_RETENTION_MS - 1000);
  expect(await ids.sweep(time.now())).toBe(1);
  expect(await ids.find('c', 'a1b')).toBeNull();
  expect(await ids.find('c', '2f')).toEqual(ref(1));
  expect(await ids.sweep(time.now())).toBe(0);
  time.advance(1000);
  expect(await ids.sweep(time.now())).toBe(1);
  expect(await ids.find('c', '2f')).toBeNull();
});
