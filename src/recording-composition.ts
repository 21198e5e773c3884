import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UriBuilder } from './api/envelope.js';
import type { CallbackDelivery } from './callbacks/index.js';
import type { MediaService } from './call/media-service.js';
import type { ExpiredBatch } from './call/record-retention.js';
import { CallRecordings } from './call/recordings/call-recordings.js';
import { removeExpiredRecordings } from './call/recordings/recording-retention.js';
import { recordingCollection, type RecordingRecord } from './call/recordings/recording-record.js';
import type { Config } from './config/config.js';
import { DiskMediaStore, MemoryMediaStore, type MediaStore } from './messaging/mms/media-store.js';
import type { Collection } from './state/collection.js';
import type { State } from './state/state.js';

export interface RecordingsComposition {
  service: CallRecordings;
  collection: Collection<RecordingRecord>;
  store: MediaStore;
  /** The sweep of a tenant's recordings past VOXGATE_RECORDING_RETENTION_DAYS; none when kept. */
  expired(tenant: string): ExpiredBatch[];
}

/**
 * Part of the composition root (app.ts): call recordings go to a media store in the directory MMS
 * media uses (under the data directory; in memory without one), spooled while they run under
 * `<dataDir>/recordings-spool/` (a temporary directory without a data directory), and are
 * served at `/v1/Account/{auth_id}/Recording/{recording_id}.{format}`. Each is charged at
 * VOXGATE_RECORDING_RATE and kept VOXGATE_RECORDING_RETENTION_DAYS.
 */
export function composeRecordings(
  config: Config,
  deps: {
    state: State;
    media: MediaService;
    callbacks: CallbackDelivery;
    log: CallRecordings['options']['log'];
    /** This gateway node (its id), named on the records of the files it stores. */
    node: string;
  },
): RecordingsComposition {
  const collection = recordingCollection(deps.state.store);
  const uris = new UriBuilder(config.publicUrl);
  // The directory MMS media is kept in: recording ids are uuids of their own.
  const store = config.dataDir
    ? new DiskMediaStore(join(config.dataDir, 'media'))
    : new MemoryMediaStore();
  const service = new CallRecordings({
    recordings: collection,
    store,
    media: deps.media,
    callbacks: deps.callbacks,
    spoolDir: config.dataDir
      ? join(config.dataDir, 'recordings-spool')
      : join(tmpdir(), `voxgate-recordings-${process.pid}`),
    fileUrl: (authId, recordingId, format) =>
      `${uris.account(authId, 'Recording')}${recordingId}.${format}`,
    ratePerMinute: config.recordings.ratePerMinute,
    node: deps.node,
    log: deps.log,
  });
  const { retentionMs } = config.recordings;
  const expired = (tenant: string): ExpiredBatch[] =>
    retentionMs === null
      ? []
      : [(now) => removeExpiredRecordings(collection, store, tenant, now, retentionMs)];
  return { service, collection, store, expired };
}
