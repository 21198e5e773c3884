import type { State } from '../state/state.js';
import type { MediaStore } from './mms/media-store.js';

/**
 * How long message records (and their media) are kept: as long as call records, 90 days. The
 * messaging document gives no figure; the list's 30-day window reads well inside it.
 */
export const MESSAGE_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * Removes one batch of a tenant's messages created more than 90 days before `now`, oldest
 * first, with their media records and every media file no other message still uses. Resolves
 * with how many messages went.
 */
export async function removeExpiredMessages(
  state: State,
  media: MediaStore,
  tenant: string,
  now: number,
  batch = 200,
): Promise<number> {
  const { items } = await state.messages.page(tenant, {
    scoreMax: now - MESSAGE_RETENTION_MS - 1,
    ascending: true,
    offset: 0,
    limit: batch,
  });
  for (const message of items) {
    for (const record of await state.media.all(tenant, `msg:${message.message_uuid}`)) {
      await state.media.remove(record);
      const sharing = await state.media.page(tenant, {
        index: `file:${record.file_id}`,
        offset: 0,
        limit: 1,
      });
      if (sharing.total === 0) await media.remove(record.file_id);
    }
    await state.messages.remove(message);
  }
  return items.length;
}
