export {
  CallbackDelivery,
  type CallbackDeliveryDelegate,
  type CallbackDeliveryOptions,
  type CallbackJob,
  type CallbackLog,
  type CallbackReport,
  type SigningKeys,
} from './callback-delivery.js';
export {
  DEFAULT_CALLBACK_TIMEOUT_MS,
  MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS,
  type CallbackRequest,
} from './callback-request.js';
export { fetchSignedDocument, MAX_DOCUMENT_BYTES, type FetchedDocument } from './document-fetch.js';
export type { RetryHandler, RetryQueue } from './retry-queue.js';
export { TimerRetryQueue } from './timer-retry-queue.js';
export {
  BullMqRetryQueue,
  DEFAULT_CALLBACK_QUEUE_NAME,
  type BullMqRetryQueueOptions,
} from './bullmq-retry-queue.js';
export {
  newSignatureNonce,
  signatureHeaders,
  signatureV2,
  signatureV3,
  signatureV3Payload,
  type CallbackMethod,
  type SignedRequest,
  type SigningTokens,
} from './signature.js';
