import type { Owned } from './collection.js';

/**
 * The stored shapes of the directory resources. They hold what the gateway needs, secrets
 * included (auth tokens, HA1 digests, trunk passwords); the API layer decides what a client sees.
 * Secrets are sealed in the store and in clear here (state.ts names them; README, Secrets at
 * rest).
 */
export interface AccountRecord extends Owned {
  auth_id: string;
  auth_token: string;
  /**
   * The keyed digest of auth_token (secret-box.ts) that logins are checked against; written
   * with every write, absent on records an older version stored.
   */
  auth_token_digest?: string;
  name: string;
  enabled: boolean;
  /** Limits the operator set for it (src/limits); absent ones are the defaults. */
  limits?: Partial<AccountLimits>;
  /** Main accounts have subaccount null and account === auth_id. */
  modified: number;
}

/** Per-account limits; null: none of its own (src/limits). */
export interface AccountLimits {
  /** Calls running at once. */
  calls: number | null;
  /** Calls placed per second (outbound): more wait, queued. */
  calls_per_second: number | null;
  /** Audio streams running at once. */
  streams: number | null;
  /** Messages sent per second: more wait in the send queue. */
  messages_per_second: number | null;
}

export interface ApplicationRecord extends Owned {
  app_id: string;
  app_name: string;
  answer_url: string;
  answer_method: string;
  hangup_url: string | null;
  hangup_method: string;
  fallback_answer_url: string | null;
  fallback_method: string;
  message_url: string | null;
  message_method: string;
  default_number_app: boolean;
  default_endpoint_app: boolean;
  modified: number;
}

export interface NumberRecord extends Owned {
  /** E.164 digits without the plus. */
  number: string;
  alias: string | null;
  app_id: string | null;
  /**
   * An inbound trunk (SipTrunk/Trunk/) that takes the number's calls instead of its
   * application; absent on numbers stored before trunks carried calls.
   */
  trunk_id?: string | null;
  carrier: string;
  region: string;
  number_type: string;
  voice_enabled: boolean;
  sms_enabled: boolean;
  mms_enabled: boolean;
}

export interface EndpointRecord extends Owned {
  endpoint_id: string;
  username: string;
  alias: string;
  /** MD5(password): what the API returns as `password`. */
  password_md5: string;
  /** RFC 7616 HA1 values for the gateway's digest realm, per algorithm. */
  ha1_md5: string;
  ha1_sha256: string;
  app_id: string | null;
  /** SDES-SRTP or DTLS-SRTP on its calls (call/srtp-policy.ts); absent: optional. */
  srtp?: 'required' | 'optional' | 'off' | 'dtls';
}

export interface OriginationUriRecord extends Owned {
  uri_uuid: string;
  /** Optional friendly name; null when none was given. */
  name: string | null;
  uri: string;
  authentication_needed: boolean;
  username: string | null;
  /** Kept to authenticate calls sent to the URI; never returned. */
  password: string | null;
}

export interface TrunkRecord extends Owned {
  trunk_id: string;
  /** Optional friendly name; null when none was given. */
  name: string | null;
  trunk_direction: 'inbound';
  primary_uri_uuid: string;
  fallback_uri_uuid: string | null;
  /** SDES-SRTP on the calls to its URIs (call/srtp-policy.ts); absent: optional. */
  srtp?: 'required' | 'optional' | 'off';
}

/** A contact bound by the registrar (RFC 3261 10.3) and the flow it came over. */
export interface BindingRecord {
  contact: string;
  /** ms since the epoch. */
  expires_at: number;
  call_id: string;
  cseq: number;
  user_agent: string | null;
  protocol: string;
  address: string;
  port: number;
  /** The connection the client registered over, on `node` (null for UDP). */
  connection_id: string | null;
  node: string;
  /**
   * The REGISTER's Path values (RFC 3327), the proxy nearest to us first: requests to the
   * contact are routed through them. Empty or absent (bindings stored before Path support)
   * when the client registered directly.
   */
  path?: string[];
}

/**
 * The bindings of one address of record: an endpoint (`endpoint:<endpoint_id>`) or the subject
 * of an access token of one account or subaccount (`token:<owner id>:<sub>`). Kept apart from the endpoint record, which only the API
 * writes, so that registrations never race with endpoint updates.
 */
export interface RegistrationRecord extends Owned {
  aor: string;
  bindings: BindingRecord[];
}

export type CallDirection = 'inbound' | 'outbound';

/** `chatapp_voice` marks a call placed as a chat-app voice call (create call's `call_type`). */
export type CallType = 'voice' | 'chatapp_voice';

export type HangupSource =
  'Caller' | 'Callee' | 'Service' | 'API Request' | 'Answer XML' | 'Error' | 'Unknown';

export type StirVerification = 'Verified' | 'Not Verified' | 'Not Applicable';

/** What `POST Call/{uuid}/Conversion/` reported for a call; each part null when not given. */
export interface CallConversion {
  timestamp: string | null;
  status: string | null;
}

/**
 * The detail record (CDR) of one finished call leg, as the voice document's Call table lists
 * it; `resource_uri` is added when it is read. Times are `YYYY-MM-DD HH:MM:SS+00:00` in UTC and
 * `created` is the initiation time. The `calls` collection scores it by `end_time`.
 */
export interface CallRecord extends Owned {
  call_uuid: string;
  /** The create-call request that placed it; null for an inbound call. */
  request_uuid: string | null;
  call_type: CallType;
  from_number: string;
  to_number: string;
  /** ISO 3166-1 alpha-2 country of the number; '' for a SIP URI or an unknown number. */
  from_iso: string;
  to_iso: string;
  call_direction: CallDirection;
  initiation_time: string;
  /** null when the call was never answered. */
  answer_time: string | null;
  end_time: string;
  call_duration: number;
  ring_duration: number;
  bill_duration: number;
  billed_duration: number;
  total_amount: string;
  total_rate: string;
  parent_call_uuid: string | null;
  conference_uuid: string | null;
  hangup_cause_name: string;
  hangup_cause_code: number;
  hangup_source: HangupSource;
  stir_verification: StirVerification;
  /** `A`, `B`, `C`, or '' when the call carried no attestation. */
  stir_attestation: string;
  source_ip: string;
  /** `ANSWER`, `BUSY`, `NO ANSWER` or `FAILED`. */
  call_state: string;
  /** The conversion reported for the call; absent (or null) when none was. */
  conversion?: CallConversion | null;
  /** Answering-machine detection's outcome; absent (or null) when none was asked or decided. */
  machine_detection?: MachineDetectionOutcome | null; /**
   * The ms the call's recordings wrote, summed, and what they were charged (each recording per
   * started minute at the recording rate, docs/recordings.md); absent when nothing was recorded.
   */
  recording_duration_ms?: number;
  recording_amount?: string;
}

/** What answering-machine detection decided on an outbound call (README, Machine detection). */
export interface MachineDetectionOutcome {
  /** What Machine said: true only for `machine`. */
  machine: boolean;
  result: 'machine' | 'human' | 'unknown';
  /** Why, e.g. beep, long-greeting, silence-after-greeting, no-audio. */
  reason: string;
  /** Milliseconds from the answer to the verdict. */
  decision_ms: number;
  /** sync: the answer_url waited for it; async: it went to machine_detection_url. */
  mode: 'sync' | 'async';
}

export type StreamTrack = 'inbound' | 'outbound' | 'both';

/**
 * One audio stream of a call (voice document, Audio stream). Times are
 * `YYYY-MM-DD HH:MM:SS+00:00` in UTC; `end_time` and the billing fields are null while the
 * stream runs. `bill_duration` is the streamed seconds, `rounded_bill_duration` those seconds
 * rounded up to whole minutes (in seconds), `billed_amount` the rounded minutes at the
 * streaming rate. The `streams` collection indexes it under `call:<call_uuid>`.
 */
export interface StreamRecord extends Owned {
  stream_id: string;
  call_uuid: string;
  service_url: string;
  bidirectional: boolean;
  audio_track: StreamTrack;
  content_type: string;
  start_time: string;
  end_time: string | null;
  bill_duration: number | null;
  rounded_bill_duration: number | null;
  billed_amount: string | null;
  /** connected, stopped, timeout or failed: how the stream went (or is going). */
  status: 'connecting' | 'connected' | 'stopped' | 'timeout' | 'failed';
}

export type MessageDirection = 'inbound' | 'outbound';
export type MessageType = 'sms' | 'mms' | 'chatapp';
/** Outbound: queued, sent, failed, delivered, undelivered, read. Inbound: received, delivered, undelivered. */
export type MessageState =
  'queued' | 'sent' | 'failed' | 'delivered' | 'undelivered' | 'read' | 'received';

/** One SMPP part of an outbound SMS: the carrier's id for it and what its receipt said. */
export interface MessagePart {
  /** The carrier's message id from submit_sm_resp; null until it is sent. */
  carrier_id: string | null;
  state: 'pending' | 'sent' | 'delivered' | 'undelivered' | 'failed';
  /** The messaging error code (wire-compat-messaging.md) the part ended with; null while none. */
  error_code: string | null;
}

/**
 * The detail record (MDR) of one message, one record however many parts it went in. Numbers and
 * text are stored as its `log` setting allows (masked, redacted); what must still be sent sits
 * in the outbox until it is. Times are ms since the epoch; the API formats them.
 */
export interface MessageRecord extends Owned {
  message_uuid: string;
  message_direction: MessageDirection;
  message_type: MessageType;
  message_state: MessageState;
  from_number: string;
  to_number: string;
  /** The text as `log` allows it to be kept (the redaction marker otherwise). */
  text: string;
  units: number;
  /** Per unit, five decimals. */
  total_rate: string;
  total_amount: string;
  carrier_fees_rate: string;
  carrier_fees: string;
  error_code: string | null;
  error_message: string | null;
  powerpack_id: string | null;
  destination_country_iso2: string;
  destination_network: string | null;
  requester_ip: string | null;
  is_domestic: boolean;
  replaced_sender: string | null;
  /** true, false, content_only or number_only. */
  log: string;
  trackable: boolean;
  /** optout, optin, help or '' (inbound). */
  message_intent: string;
  conversation_id: string | null;
  conversation_origin: string | null;
  conversation_expiration_timestamp: number | null;
  /** The carrier (SMPP route) that took it, by name. */
  carrier: string | null;
  sent_time: number | null;
  delivery_report_time: number | null;
  updated_time: number;
  /** When a message not yet handed to the carrier fails with 420. */
  expires_at: number | null;
  callback_url: string | null;
  callback_method: 'GET' | 'POST';
  /** The Sequence of the last status callback sent. */
  callback_sequence: number;
  parts: MessagePart[];
}

/** What is still to be sent for a queued outbound message: the real numbers and text. */
export interface OutboxRecord extends Owned {
  message_uuid: string;
  src: string;
  dst: string;
  text: string;
  expires_at: number;
  /** A chat-app message's content (text, template...); absent for SMS. */
  chatapp?: { kind: string } & Record<string, unknown>;
  /** An MMS: its media are the media records of the message. */
  mms?: boolean;
}

/** A pool of sender numbers (Powerpack/). */
/**
 * A carrier that sends calls to the account's numbers (IncomingCarrier/), known by the
 * addresses it sends from; a number's `carrier` names one by its carrier_id.
 */
export interface IncomingCarrierRecord extends Owned {
  /** Digits, as the public API gives them. */
  carrier_id: string;
  name: string;
  /** Addresses and CIDR ranges, normalised (src/call/incoming-carriers.ts). */
  ip_set: string[];
  voice: boolean;
  sms: boolean;
}

export interface PowerpackRecord extends Owned {
  uuid: string;
  name: string;
  /** E.164 digits without the plus; each a number the account holds. */
  numbers: string[];
  sticky_sender: boolean;
  local_connect: boolean;
  application_id: string | null;
  modified: number;
}

/** A phone number of a chat-app business account, with the id upstream gives it. */
export interface ChatAppPhoneNumber {
  /** E.164 digits, a number the account holds. */
  number: string;
  phone_number_id: string;
}

/**
 * A chat-app (WhatsApp Business) account connected to voxgate. The access token, app secret
 * and verify token are secrets: they go upstream or check what comes from there, and never
 * appear in an answer, a log line or a callback.
 */
export interface ChatAppAccountRecord extends Owned {
  /** The upstream business account id (WABA id): the record's id, unique across tenants. */
  biz_account_id: string;
  name: string | null;
  access_token: string;
  app_secret: string;
  /** What upstream's subscription check must present (`hub.verify_token`). */
  verify_token: string;
  /** Where template review events are forwarded, signed; null forwards nothing. */
  webhook_url: string | null;
  webhook_method: 'GET' | 'POST';
  phone_numbers: ChatAppPhoneNumber[];
  modified: number;
}

/** A chat-app message template, mirrored from upstream (which issues its id and reviews it). */
export interface ChatAppTemplateRecord extends Owned {
  template_id: string;
  biz_account_id: string;
  name: string;
  language: string;
  category: string;
  allow_category_change: boolean;
  /** As the client sent them (checked), in order. */
  components: unknown[];
  status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED';
  quality_score: { score: string } | null;
  rejected_reason: string;
  modified: number;
}

/** A template name deleted from a business account: not to be used again for 30 days. */
export interface ChatAppDeletedNameRecord extends Owned {
  /** `<biz_account_id>:<name>` */
  id: string;
  deleted_at: number;
}

/** A media file of an MMS (sent or received), kept in the media store. */
export interface MediaRecord extends Owned {
  media_id: string;
  message_uuid: string;
  /** The file in the media store; the messages of one send to several numbers share it. */
  file_id: string;
  /** Its place among the message's media, from 0. */
  index: number;
  content_type: string;
  size: number;
  /** The name it came with, or ''. */
  file_name: string;
}

/** A compliance profile: the business behind toll-free verification requests (Profile/). */
export interface ProfileRecord extends Owned {
  profile_uuid: string;
  profile_alias: string;
  customer_type: string;
  entity_type: string;
  company_name: string;
  ein: string;
  ein_issuing_country: string;
  vertical: string;
  stock_symbol: string;
  stock_exchange: string;
  alt_business_id_type: string;
  website: string;
  address: {
    street: string;
    city: string;
    state: string;
    postal_code: string;
    country: string;
  };
  authorized_contact: {
    first_name: string;
    last_name: string;
    phone: string;
    email: string;
    title: string;
    seniority: string;
  };
  business_contact_email: string;
  doing_business_as: string;
  modified: number;
}

export type TollfreeStatus =
  'SUBMITTED' | 'PROCESSING' | 'UPDATE_REQUIRED' | 'APPROVED' | 'REJECTED';

/** A toll-free verification request (TollfreeVerification/). */
export interface TollfreeVerificationRecord extends Owned {
  uuid: string;
  profile_uuid: string;
  /** E.164 digits of a US or Canadian toll-free number of the account. */
  number: string;
  /** Use cases, comma-separated, in the order given. */
  usecase: string;
  usecase_summary: string;
  message_sample: string;
  optin_image_url: string;
  optin_type: string;
  volume: string;
  additional_information: string;
  extra_data: string;
  /** Sent by newer official SDKs; absent from requests stored before voxgate kept them. */
  terms_and_conditions_link?: string;
  privacy_policy_link?: string;
  optin_message?: string;
  help_message?: string;
  status: TollfreeStatus;
  rejection_reason: string;
  error_message: string;
  callback_url: string | null;
  callback_method: 'GET' | 'POST';
  modified: number;
  /** Every status the request took, oldest first. */
  history: {
    status: TollfreeStatus;
    time: number;
    error_message: string;
    rejection_reason: string;
  }[];
}

/** An opt-out of a sender from a service number's messages (id `<service>:<sender>`). */
export interface OptOutRecord extends Owned {
  id: string;
  service_number: string;
  sender: string;
  /** The keyword that opted out. */
  keyword: string;
}
