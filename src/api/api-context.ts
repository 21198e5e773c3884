import type { InboundCarrierMode } from '../call/incoming-carriers.js';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ConferenceControl } from '../call/conferences/conference-control.js';
import type { CallControl } from '../call/live-control.js';
import type { CallLauncher } from '../call/call-launcher.js';
import type { CallEngine } from '../call/call-engine.js';
import type { Clock } from '../core/clock.js';
import type { OutboundGuard } from '../core/outbound-guard.js';
import type { MessagePipeline } from '../messaging/message-pipeline.js';
import type { State } from '../state/state.js';
import type { Authenticator } from './auth.js';
import type { UriBuilder } from './envelope.js';
import type { ChatAppTemplates } from '../messaging/chatapp/chatapp-templates.js';
import type { MediaStore } from '../messaging/mms/media-store.js';
import type { TollfreeVerifications } from '../tollfree/verifications.js';
import type { RecordingRoutesContext } from './routes/recordings.js';

/** What route modules are given: the repositories and the conventions of the API. */
export interface ApiContext {
  state: State;
  uris: UriBuilder;
  authenticator: Authenticator;
  clock: Clock;
  /** The host put in endpoint SIP URIs. */
  sipDomain: string;
  /** Places calls. */
  calls: CallEngine;
  /** Places outbound calls on the node that should run them (this one without a cluster). */
  launcher?: CallLauncher;
  /** Lists, shows and acts on calls in progress, on this node or another. */
  control: CallControl;
  /** Lists, shows and acts on conference rooms, on this node or another. */
  conferences: ConferenceControl;
  /** Accepts messages to send. */
  messages: MessagePipeline;
  /** Chat-app templates, mirrored upstream. */
  chatAppTemplates: ChatAppTemplates;
  /** The files of MMS media. */
  mediaStore: MediaStore;
  /** Toll-free verification requests as they move through review. */
  tollfree: TollfreeVerifications;
  /** Checks the URLs a request brings against the outbound policy (outbound-urls.ts). */
  outbound: OutboundGuard;
  /** Call recordings: starting and stopping them, and their records. */
  recordings?: RecordingRoutesContext;
  /** Whether a number's `carrier` must name an IncomingCarrier (VOXGATE_INBOUND_CARRIERS). */
  inboundCarriers: InboundCarrierMode;
}

export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export type RouteModule = (app: TypedApp, context: ApiContext) => void;
