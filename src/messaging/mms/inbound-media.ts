import { newUuid } from '../../core/ids.js';
import type { Owned } from '../../state/collection.js';
import type { State } from '../../state/state.js';
import type { MediaStore } from './media-store.js';

/** A file an inbound message carried. */
export interface InboundFile {
  contentType: string;
  body: Buffer;
  fileName?: string;
}

/** Where inbound media go and how an application reaches them. */
export interface InboundMediaSink {
  state: State;
  store: MediaStore;
  /** The URL an application fetches a media file at. */
  mediaUrl(authId: string, messageUuid: string, mediaId: string): string;
}

/**
 * Keeps the files of an inbound message (MMS or chat-app) in the media store under the
 * message's uuid, owned as the receiving number is; resolves with the `MediaCount` and
 * `Media0..N` parameters of its message_url request.
 */
export async function storeInboundMedia(
  sink: InboundMediaSink,
  owner: Owned,
  messageUuid: string,
  files: InboundFile[],
): Promise<Record<string, string>> {
  const params: Record<string, string> = { MediaCount: String(files.length) };
  const authId = owner.subaccount ?? owner.account;
  for (const [index, file] of files.entries()) {
    const fileId = newUuid();
    const mediaId = newUuid();
    await sink.store.put(fileId, file.body);
    await sink.state.media.create({
      account: owner.account,
      subaccount: owner.subaccount,
      created: owner.created,
      media_id: mediaId,
      message_uuid: messageUuid,
      file_id: fileId,
      index,
      content_type: file.contentType.split(';')[0]!.trim().toLowerCase(),
      size: file.body.length,
      file_name: file.fileName ?? '',
    });
    params[`Media${index}`] = sink.mediaUrl(authId, messageUuid, mediaId);
  }
  return params;
}
