import type { MediaStore } from '../../messaging/mms/media-store.js';
import type { Collection } from '../../state/collection.js';
import type { RecordingRecord } from './recording-record.js';

/**
 * Removes one batch of a tenant's recordings stored more than `retentionMs` before `now`,
 * oldest first: the file, then the record (a file whose record is gone could never be found
 * again, so the file goes first). Resolves with how many went; runs in the call records'
 * retention sweep (call/record-retention.ts).
 */
export async function removeExpiredRecordings(
  recordings: Collection<RecordingRecord>,
  store: MediaStore,
  tenant: string,
  now: number,
  retentionMs: number,
  batch = 200,
): Promise<number> {
  const { items } = await recordings.page(tenant, {
    scoreMax: now - retentionMs - 1,
    ascending: true,
    offset: 0,
    limit: batch,
  });
  for (const recording of items) {
    await store.remove(recording.recording_id);
    await recordings.remove(recording);
  }
  return items.length;
}
