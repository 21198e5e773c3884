import { httpExchange } from '../../callbacks/http-exchange.js';
import type { Mm7Settings } from '../../config/config.js';
import { newUuid } from '../../core/ids.js';
import type { MediaRecord, MessageRecord, OutboxRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';
import type { PartOutcome } from '../carrier-network.js';
import { fetchMedia } from './media-fetch.js';
import type { MediaStore } from './media-store.js';
import { encodeSubmitReq, Mm7Error, parseSubmitRsp, type Mm7Part } from './mm7-codec.js';

/** The carrier name MMS are recorded with, and their MMSC message ids kept under. */
export const MM7_CARRIER = 'mm7';
const SUBMIT_TIMEOUT_MS = 30_000;
/** TS 23.140: 1000 Success, 1100 Partial success. */
const ACCEPTED = new Set([1000, 1100]);

/** A fetched file in the media store, shared by the messages of one send. */
export interface StoredMedia {
  file_id: string;
  content_type: string;
  size: number;
  file_name: string;
}

/**
 * MMS: the media of a send fetched (size, time and type checked) and kept in the media store
 * before the send is answered, then each message submitted to the MMSC over MM7 with its text
 * and media as parts.
 */
export class MmsChannel {
  constructor(
    private readonly state: State,
    readonly store: MediaStore,
    private readonly mm7: Mm7Settings | null,
  ) {}

  get configured(): boolean {
    return this.mm7 !== null;
  }

  /** Fetches and stores the media of a send; throws a 400 naming the URL and the rule. */
  async prepare(urls: string[]): Promise<StoredMedia[]> {
    const fetched = await fetchMedia(urls);
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

  /** One message to the MMSC: resolves with its message id, or the refusal. */
  async send(entry: OutboxRecord, now: number): Promise<PartOutcome> {
    if (!this.mm7) return refused('no MMSC is configured (VOXGATE_MMS_MM7_URL)');
    const media = await this.state.media.all(entry.account, `msg:${entry.message_uuid}`);
    const parts: Mm7Part[] = [];
    if (entry.text !== '')
      parts.push({
        contentType: 'text/plain; charset=utf-8',
        contentId: 'text',
        body: Buffer.from(entry.text),
      });
    for (const m of media.sort((a, b) => a.index - b.index)) {
      const body = await this.store.get(m.file_id);
      if (!body) return refused(`media ${m.media_id} is no longer in the media store`);
      parts.push({
        contentType: m.content_type,
        contentId: `media${m.index}`,
        body,
        ...(m.file_name ? { filename: m.file_name } : {}),
      });
    }
    const { contentType, body } = encodeSubmitReq({
      transactionId: entry.message_uuid,
      ...(this.mm7.vaspId ? { vaspId: this.mm7.vaspId } : {}),
      ...(this.mm7.vasId ? { vasId: this.mm7.vasId } : {}),
      senderAddress: entry.src,
      recipients: [entry.dst],
      deliveryReport: true,
      expirySeconds: Math.max(1, Math.round((entry.expires_at - now) / 1000)),
      parts,
    });
    const credentials = Buffer.from(`${this.mm7.username}:${this.mm7.password}`).toString('base64');
    const result = await httpExchange(
      {
        url: new URL(this.mm7.url),
        method: 'POST',
        headers: {
          'Content-Type': contentType,
          SOAPAction: '""',
          Authorization: `Basic ${credentials}`,
        },
        body,
      },
      { timeoutMs: SUBMIT_TIMEOUT_MS, readBody: { maxBytes: 256 * 1024 } },
    );
    if (!result.ok)
      return refused(
        `the MMSC could not be reached: ${'status' in result ? `HTTP ${result.status}` : result.error}`,
      );
    try {
      const answer = parseSubmitRsp(result.body?.toString('utf8') ?? '');
      if (!ACCEPTED.has(answer.statusCode) || !answer.messageId)
        return refused(`the MMSC refused the message: ${answer.statusCode} ${answer.statusText}`);
      return { ok: true, messageId: answer.messageId };
    } catch (error) {
      if (error instanceof Mm7Error)
        return refused(
          `the MMSC answered HTTP ${result.status} without a SubmitRsp: ${error.message}`,
        );
      throw error;
    }
  }
}

function refused(error: string): PartOutcome {
  return { ok: false, commandStatus: null, expired: false, error };
}
