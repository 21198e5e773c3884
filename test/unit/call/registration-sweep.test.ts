import { describe, expect, it } from 'vitest';
import { removeExpiredRegistrations } from '../../../src/call/registrar-directory.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import type { BindingRecord, RegistrationRecord } from '../../../src/state/records.js';
import { createState } from '../../../src/state/state.js';

const NOW = Date.UTC(2026, 10, 29, 12);

const binding = (contact: string, expiresAt: number): BindingRecord => ({
  contact,
  expires_at: expiresAt,
  call_id: `reg-${contact}`,
  cseq: 1,
  user_agent: null,
  protocol: 'UDP',
  address: '192.0.2.7',
  port: 5060,
  connection_id: null,
  node: 'node-gone',
});

const registration = (aor: string, created: number, bindings: BindingRecord[]) =>
  ({ account: 'MA1', subaccount: null, created, aor, bindings }) satisfies RegistrationRecord;

describe('removeExpiredRegistrations', () => {
  it('removes registrations with no live binding, strips expired bindings, keeps live ones', async () => {
    const state = createState(new EmbeddedStore(null));
    // A stopped node's phone, expired an hour ago; an older format's key; one half expired.
    await state.registrations.create(
      registration('endpoint:E1', 1, [binding('sip:a@192.0.2.7', NOW - 3_600_000)]),
    );
    await state.registrations.create(
      registration('token:alice', 2, [binding('sip:alice@x.invalid', NOW - 1)]),
    );
    await state.registrations.create(
      registration('endpoint:E2', 3, [
        binding('sip:b@192.0.2.7', NOW - 10),
        binding('sip:c@192.0.2.8', NOW + 60_000),
      ]),
    );
    await state.registrations.create(
      registration('endpoint:E3', 4, [binding('sip:d@192.0.2.9', NOW + 60_000)]),
    );
    // Pages of two: removals move what follows back in the index, and none is skipped.
    expect(await removeExpiredRegistrations(state, 'MA1', NOW, 2)).toBe(3);
    expect(await state.registrations.get('MA1', 'endpoint:E1')).toBeNull();
    expect(await state.registrations.get('MA1', 'token:alice')).toBeNull();
    const half = await state.registrations.get('MA1', 'endpoint:E2');
    expect(half?.bindings.map((b) => b.contact)).toEqual(['sip:c@192.0.2.8']);
    expect((await state.registrations.get('MA1', 'endpoint:E3'))?.bindings).toHaveLength(1);
    expect(await removeExpiredRegistrations(state, 'MA1', NOW, 2)).toBe(0);
  });

  it('leaves a registration a REGISTER changed after the sweep read it', async () => {
    const state = createState(new EmbeddedStore(null));
    const stale = registration('endpoint:E9', 1, [binding('sip:e@192.0.2.7', NOW - 1)]);
    await state.registrations.create(stale);
    const refreshed = registration('endpoint:E9', 1, [binding('sip:e@192.0.2.7', NOW + 60_000)]);
    // The REGISTER lands between the sweep's read and its write.
    const page = state.registrations.page.bind(state.registrations);
    state.registrations.page = async (...args) => {
      const read = await page(...args);
      if (read.items.length > 0) await state.registrations.swap(stale, refreshed);
      return read;
    };
    expect(await removeExpiredRegistrations(state, 'MA1', NOW)).toBe(0);
    expect(await state.registrations.get('MA1', 'endpoint:E9')).toEqual(refreshed);
  });
});
