import { expect, it } from 'vitest';
import { newMessage } from '../../../src/messaging/new-message.js';
import {
  MESSAGE_RETENTION_MS,
  removeExpiredMessages,
} from '../../../src/messaging/message-retention.js';
import { MemoryMediaStore } from '../../../src/messaging/mms/media-store.js';
import { parseSendRequest } from '../../../src/messaging/send-request.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { createState } from '../../../src/state/state.js';

const DAY = 24 * 60 * 60 * 1000;
const sender = { account: 'MA1', subaccount: null, authId: 'MA1', requesterIp: null };
const request = parseSendRequest({ src: '14155550100', dst: '14155550177', text: 'hi' });

it('removes messages past 90 days with their media, and a file only when no message still uses it', async () => {
  const state = createState(new EmbeddedStore(null));
  const files = new MemoryMediaStore();
  const now = Date.UTC(2026, 10, 25);
  const message = async (age: number, fileIds: string[]) => {
    const { record } = newMessage(now - age, sender, request, {
      type: 'mms',
      source: '14155550100',
      destination: '14155550177',
      text: 'hi',
      units: 1,
      ratePerUnit: '0',
      feePerUnit: '0',
      powerpackUuid: null,
    });
    await state.messages.create(record);
    for (const [index, fileId] of fileIds.entries()) {
      await files.put(fileId, Buffer.from(fileId));
      await state.media.create({
        account: 'MA1',
        subaccount: null,
        created: record.created,
        media_id: `${record.message_uuid}-${index}`,
        message_uuid: record.message_uuid,
        file_id: fileId,
        index,
        content_type: 'image/png',
        size: 1,
        file_name: '',
      });
    }
    return record.message_uuid;
  };
  const shared = '11111111-1111-4111-8111-111111111111';
  const own = '22222222-2222-4222-8222-222222222222';
  const old = await message(MESSAGE_RETENTION_MS + DAY, [shared, own]);
  const kept = await message(MESSAGE_RETENTION_MS - DAY, [shared]);

  expect(await removeExpiredMessages(state, files, 'MA1', now)).toBe(1);
  expect(await state.messages.get('MA1', old)).toBeNull();
  expect(await state.media.all('MA1', `msg:${old}`)).toEqual([]);
  expect(await files.get(own)).toBeNull();
  expect(await files.get(shared)).not.toBeNull();
  expect(await state.messages.get('MA1', kept)).not.toBeNull();
  expect(await removeExpiredMessages(state, files, 'MA1', now)).toBe(0);

  expect(await removeExpiredMessages(state, files, 'MA1', now + 2 * DAY)).toBe(1);
  expect(await files.get(shared)).toBeNull();
});
