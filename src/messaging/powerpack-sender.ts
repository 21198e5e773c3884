import { createHash } from 'node:crypto';
import { countryOf } from '../core/phone-number.js';
import type { DocumentEntry } from '../state/document-store.js';
import type { PowerpackRecord } from '../state/records.js';
import type { State } from '../state/state.js';

const STICKY_KIND = 'powerpack_sticky';
const ENTRY: DocumentEntry = { score: 0, indexes: [], unique: [] };

/**
 * The number of a powerpack's pool a message to `destination` goes from: one in the
 * destination's country when the pool has one, otherwise any. With sticky_sender the same
 * destination gets the same number every time: the first choice is stored and kept while the
 * number stays in the pool, and the choice itself is a stable hash of the destination, so it
 * is the same on every node even before anything is stored. null when the pool is empty.
 */
export async function pickPowerpackSender(
  state: State,
  powerpack: PowerpackRecord,
  destination: string,
): Promise<string | null> {
  if (powerpack.numbers.length === 0) return null;
  const country = countryOf(destination);
  const local = powerpack.numbers.filter((n) => country !== '' && countryOf(n) === country);
  const candidates = local.length > 0 ? local : powerpack.numbers;
  if (!powerpack.sticky_sender) return candidates[Math.floor(Math.random() * candidates.length)]!;
  const id = `${powerpack.uuid}:${destination}`;
  const stored = await state.store.get<{ number: string }>(STICKY_KIND, powerpack.account, id);
  if (stored && candidates.includes(stored.number)) return stored.number;
  const digest = createHash('sha256').update(destination).digest();
  const chosen = candidates[digest.readUInt32BE(0) % candidates.length]!;
  await state.store.put(STICKY_KIND, powerpack.account, id, { number: chosen }, ENTRY);
  return chosen;
}
