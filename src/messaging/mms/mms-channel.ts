import { newUuid } from '../../core/ids.js';
import type { MediaRecord, MessageRecord, OutboxRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';
import type { PartOutcome } from '../carrier-network.js';
import type { OutboundGuard } from '../../core/outbound-guard.js';
import { fetchMedia } from './media-fetch.js';
import type { MediaStore } from './media-store.js';
import { refused, type MmsCarrier, type OutboundMms } from './mms-carrier.js';

/** A fetched file in the media store, shared by the messages of one send. */
export interface StoredMedia {
  file_id: string;
  content_type: string;
  size: number;
  file_name: string;
}

/**
 * MMS: the media of a send fetched (size, time and type checked) and kept in the media store
 * before the send is answered, then each message handed to the carrier adapter with its text
 * and media as parts.
 */
export class MmsChannel {
  constructor(
    private readonly state: State,
    readonly store: MediaStore,
    /** Where messages go; null refuses MMS. */
    readonly carrier: MmsCarrier | null,
    /** What the tenants' media URLs are fetched through. */
    private readonly guard: OutboundGuard,
  ) {}

  get configured(): boolean {
    return this.carrier !== null;
  }

  /** Fetches and stores the media of a send; throws a 400 naming the URL and the rule. */
  async prepare(urls: string[]): Promise<StoredMedia[]> {
    const fetched = await fetchMedia(urls, this.guard);
    const stored: StoredMedia[] = [];
    for (const media of fetched) {
      const fileId = newUuid();
      await this.store.put(fileId, media.body);
      stored.push({
        file_id: fileId,
        content_type: media.contentType,
        size: media.body.length,
        file_name: media.fileName,
      });
    }
    return stored;
  }

  /** The media records of one message, in order. */
  async attach(record: MessageRecord, media: StoredMedia[]): Promise<MediaRecord[]> {
    const records = media.map((m, index) => ({
      account: record.account,
      subaccount: record.subaccount,
      created: record.created,
      media_id: newUuid(),
      message_uuid: record.message_uuid,
      file_id: m.file_id,
      index,
      content_type: m.content_type,
      size: m.size,
      file_name: m.file_name,
    }));
    for (const r of records) await this.state.media.create(r);
    return records;
  }

  /** One message to the carrier: resolves with its message id, or the refusal. */
  async send(entry: OutboxRecord, now: number): Promise<PartOutcome> {
    if (!this.carrier) return refused('no MMS carrier is configured (VOXGATE_MMS_MM7_URL)');
    const media = await this.state.media.all(entry.account, `msg:${entry.message_uuid}`);
    const parts: OutboundMms['parts'] = [];
    if (entry.text !== '')
      parts.push({ contentType: 'text/plain; charset=utf-8', body: Buffer.from(entry.text) });
    for (const m of media.sort((a, b) => a.index - b.index)) {
      const body = await this.store.get(m.file_id);
      if (!body) return refused(`media ${m.media_id} is no longer in the media store`);
      parts.push({
        contentType: m.content_type,
        body,
        ...(m.file_name ? { fileName: m.file_name } : {}),
      });
    }
    return this.carrier.submit({
      id: entry.message_uuid,
      source: entry.src,
      destination: entry.dst,
      parts,
      expirySeconds: Math.max(1, Math.round((entry.expires_at - now) / 1000)),
    });
  }
}
