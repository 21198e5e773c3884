import { Collection } from './collection.js';
import type { DocumentStore } from './document-store.js';
import type {
  AccountRecord,
  ApplicationRecord,
  CallRecord,
  ChatAppAccountRecord,
  ChatAppDeletedNameRecord,
  ChatAppTemplateRecord,
  MediaRecord,
  ProfileRecord,
  TollfreeVerificationRecord,
  EndpointRecord,
  MessageRecord,
  NumberRecord,
  OptOutRecord,
  OriginationUriRecord,
  OutboxRecord,
  PowerpackRecord,
  IncomingCarrierRecord,
  BindingRecord,
  RegistrationRecord,
  StreamRecord,
  TrunkRecord,
} from './records.js';
import { SecretBox } from './secret-box.js';

/** The accounts index that holds a tenant's subaccounts (not the main account). */
export const SUBACCOUNTS_INDEX = 'subaccounts';

/** The repositories of the gateway, all on one DocumentStore. */
export interface State {
  store: DocumentStore;
  /** Seals the secrets the collections store, and checks auth tokens against their digest. */
  secrets: SecretBox;
  accounts: Collection<AccountRecord>;
  applications: Collection<ApplicationRecord>;
  numbers: Collection<NumberRecord>;
  endpoints: Collection<EndpointRecord>;
  originationUris: Collection<OriginationUriRecord>;
  trunks: Collection<TrunkRecord>;
  registrations: Collection<RegistrationRecord>;
  calls: Collection<CallRecord>;
  streams: Collection<StreamRecord>;
  messages: Collection<MessageRecord>;
  outbox: Collection<OutboxRecord>;
  powerpacks: Collection<PowerpackRecord>;
  incomingCarriers: Collection<IncomingCarrierRecord>;
  optOuts: Collection<OptOutRecord>;
  chatAppAccounts: Collection<ChatAppAccountRecord>;
  chatAppTemplates: Collection<ChatAppTemplateRecord>;
  chatAppDeletedNames: Collection<ChatAppDeletedNameRecord>;
  media: Collection<MediaRecord>;
  profiles: Collection<ProfileRecord>;
  tollfreeVerifications: Collection<TollfreeVerificationRecord>;
}

/**
 * The repositories over `store`. Secrets are sealed with `secrets`; without one, with a key of
 * the process's own (enough for a store that lives no longer than the process).
 */
export function createState(store: DocumentStore, secrets = SecretBox.random()): State {
  return {
    store,
    secrets,
    accounts: new Collection<AccountRecord>(
      store,
      {
        kind: 'account',
        id: (a) => a.auth_id,
        // A subaccount also sits in `sub:<its own id>` (Collection adds it) like any resource.
        indexes: (a) => (a.subaccount === null ? [] : [SUBACCOUNTS_INDEX]),
        unique: (a) => [{ space: 'auth_id', value: a.auth_id }],
        // Callbacks are signed with the token, and a subaccount's is shown to its main account:
        // it is sealed, not only digested.
        sealed: ['auth_token'],
        digest: { field: 'auth_token', into: 'auth_token_digest' },
      },
      secrets,
    ),
    applications: new Collection<ApplicationRecord>(store, {
      kind: 'application',
      id: (a) => a.app_id,
    }),
    numbers: new Collection<NumberRecord>(store, {
      kind: 'number',
      id: (n) => n.number,
      indexes: (n) => (n.app_id ? [`app:${n.app_id}`] : []),
      // A number routes to exactly one account, whoever added it.
      unique: (n) => [{ space: 'number', value: n.number }],
    }),
    endpoints: new Collection<EndpointRecord>(
      store,
      {
        kind: 'endpoint',
        id: (e) => e.endpoint_id,
        indexes: (e) => (e.app_id ? [`app:${e.app_id}`] : []),
        // The registrar finds an endpoint from the user part of a REGISTER alone.
        unique: (e) => [{ space: 'sip_user', value: e.username }],
        // An HA1 answers any challenge of the realm: as good as the password for it.
        sealed: ['password_md5', 'ha1_md5', 'ha1_sha256'],
      },
      secrets,
    ),
    originationUris: new Collection<OriginationUriRecord>(
      store,
      {
        kind: 'origination_uri',
        id: (u) => u.uri_uuid,
        // Sent in digest answers to the URI's challenges: it must be recoverable.
        sealed: ['password'],
      },
      secrets,
    ),
    trunks: new Collection<TrunkRecord>(store, {
      kind: 'trunk',
      id: (t) => t.trunk_id,
      indexes: (t) => [
        `uri:${t.primary_uri_uuid}`,
        ...(t.fallback_uri_uuid ? [`uri:${t.fallback_uri_uuid}`] : []),
      ],
    }),
    registrations: new Collection<RegistrationRecord>(store, {
      kind: 'registration',
      id: (r) => r.aor,
      // The nodes whose connections alone reach some of its contacts: should one die, those
      // bindings go (registrar-directory.ts).
      indexes: (r) => [
        ...new Set(r.bindings.filter(heldByConnection).map((b) => `node:${b.node}`)),
      ],
    }),
    calls: new Collection<CallRecord>(store, {
      kind: 'call',
      id: (c) => c.call_uuid,
      // Scored by end time, so a list reads only its time window from the index.
      score: (c) => recordTimeMs(c.end_time),
    }),
    streams: new Collection<StreamRecord>(store, {
      kind: 'stream',
      id: (s) => s.stream_id,
      indexes: (s) => [`call:${s.call_uuid}`],
    }),
    messages: new Collection<MessageRecord>(store, {
      kind: 'message',
      id: (m) => m.message_uuid,
    }),
    outbox: new Collection<OutboxRecord>(store, {
      kind: 'outbox',
      id: (o) => o.message_uuid,
    }),
    powerpacks: new Collection<PowerpackRecord>(store, {
      kind: 'powerpack',
      id: (p) => p.uuid,
    }),
    incomingCarriers: new Collection<IncomingCarrierRecord>(store, {
      kind: 'incoming_carrier',
      id: (c) => c.carrier_id,
    }),
    optOuts: new Collection<OptOutRecord>(store, {
      kind: 'opt_out',
      id: (o) => o.id,
    }),
    chatAppAccounts: new Collection<ChatAppAccountRecord>(
      store,
      {
        kind: 'chatapp_account',
        id: (a) => a.biz_account_id,
        // Upstream's webhooks name the business account and its phone-number ids, not a
        // tenant; a number answers on one chat-app account.
        unique: (a) => [
          { space: 'chatapp_account', value: a.biz_account_id },
          ...a.phone_numbers.flatMap((p) => [
            { space: 'chatapp_phone_id', value: p.phone_number_id },
            { space: 'chatapp_number', value: p.number },
          ]),
        ],
        sealed: ['access_token', 'app_secret', 'verify_token'],
      },
      secrets,
    ),
    chatAppTemplates: new Collection<ChatAppTemplateRecord>(store, {
      kind: 'chatapp_template',
      id: (t) => t.template_id,
      indexes: (t) => [`biz:${t.biz_account_id}`],
      // Review events name the template by upstream's id alone.
      unique: (t) => [{ space: 'chatapp_template', value: t.template_id }],
    }),
    chatAppDeletedNames: new Collection<ChatAppDeletedNameRecord>(store, {
      kind: 'chatapp_deleted_name',
      id: (d) => d.id,
    }),
    media: new Collection<MediaRecord>(store, {
      kind: 'media',
      id: (m) => m.media_id,
      // The messages of one send share a file; the file goes when its last record does.
      indexes: (m) => [`msg:${m.message_uuid}`, `file:${m.file_id}`],
    }),
    profiles: new Collection<ProfileRecord>(store, {
      kind: 'profile',
      id: (p) => p.profile_uuid,
    }),
    tollfreeVerifications: new Collection<TollfreeVerificationRecord>(store, {
      kind: 'tollfree_verification',
      id: (v) => v.uuid,
      indexes: (v) => [`number:${v.number}`, `profile:${v.profile_uuid}`],
    }),
  };
}

/**
 * Seals the secrets of the tenant's records that an older version stored in clear; returns how
 * many records it rewrote.
 */
export async function sealLegacySecrets(state: State, tenant: string): Promise<number> {
  const counts = [
    await state.accounts.sealLegacy(tenant),
    await state.endpoints.sealLegacy(tenant),
    await state.originationUris.sealLegacy(tenant),
    await state.chatAppAccounts.sealLegacy(tenant),
  ];
  return counts.reduce((sum, count) => sum + count, 0);
}

/** `YYYY-MM-DD HH:MM:SS+00:00` (the records' time format) → ms since the epoch. */
export function recordTimeMs(time: string): number {
  return Date.parse(time.replace(' ', 'T'));
}

/**
 * Whether only the node that holds its connection can reach a binding's contact: one made over
 * a connection (TCP, TLS, WebSocket), not through a proxy's Path (any node reaches the proxy).
 */
export function heldByConnection(binding: BindingRecord): boolean {
  return binding.connection_id !== null && (binding.path ?? []).length === 0;
}
