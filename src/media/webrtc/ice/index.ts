export { ConsentWatch } from './consent-watch.js';
export {
  checkIceCredentials,
  createIceCredentials,
  type IceCredentials,
} from './ice-credentials.js';
export {
  DEFAULT_CONSENT_TIMEOUT_MS,
  IceLiteAgent,
  type ConsentLoss,
  type IceLiteAgentOptions,
  type IceLiteDelegate,
  type IceLiteState,
  type IceRejection,
} from './ice-lite-agent.js';
