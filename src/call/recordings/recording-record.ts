import { Collection, type Owned } from '../../state/collection.js';
import type { RecordingCharge } from '../billing/recording-charge.js';
import type { DocumentStore } from '../../state/document-store.js';

export type RecordingFormat = 'wav' | 'mp3';

/**
 * A finished recording of a call (the Recording resource): its file is in the media store
 * under recording_id. Only recordings whose file was written whole are kept; a failed one is
 * told to its callback and logged.
 */
export interface RecordingRecord extends Owned, Partial<RecordingCharge> {
  recording_id: string;
  call_uuid: string;
  /** The account (or subaccount) auth id the file's URL is under. */
  auth_id: string;
  recording_format: RecordingFormat;
  /** `call` for a recording of a call, `conference` for one of a conference room's mix. */
  recording_type: 'call' | 'conference';
  conference_name: string | null;
  recording_url: string;
  from_number: string;
  to_number: string;
  channels: 1 | 2;
  /** Epoch ms of the first and after the last frame; the duration is the frames written. */
  recording_start_ms: number;
  recording_end_ms: number;
  recording_duration_ms: number;
  /** Bytes of the stored file. */
  file_bytes: number;
  /**
   * The gateway node whose media store holds the file (not shown by the API): another node
   * asked for the file or its deletion passes the request on to it. Absent before it was kept.
   */
  node?: string;
  // The charge (billing/recording-charge.ts): absent from records stored before it was kept.
}

/** The recordings collection, on the gateway's one store, listed newest first by add time. */
export function recordingCollection(store: DocumentStore): Collection<RecordingRecord> {
  return new Collection<RecordingRecord>(store, {
    kind: 'recording',
    id: (r) => r.recording_id,
    indexes: (r) => [`call:${r.call_uuid}`],
  });
}
