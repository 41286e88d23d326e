export {
  CALLBACK_SECRET_MIN_BYTES,
  CallbackConfigError,
  CallbackUrlMinter,
  type CallbackTokenVerifier,
  type CallbackUrlMinterOptions,
} from './tokens.js';
export { extractHint, parseCallbackBody, type CallbackHeaders } from './hint.js';
export {
  handleCallback,
  type CallbackLogger,
  type CallbackRequest,
  type CallbackResponse,
  type CallbackResponseBody,
  type CallbackSignal,
  type SignalOutcome,
} from './handler.js';
export { callbackRequestSerializer, redactCallbackPath, type LoggedRequest } from './log-redaction.js';
export { CALLBACK_BODY_LIMIT, callbackRoutes, type CallbackRoutesOptions } from './routes.js';
export { temporalSignaller } from './temporal-signal.js';
export {
  buildCallbackApp,
  startCallbackServer,
  type CallbackAppOptions,
  type CallbackServer,
  type CallbackServerOptions,
} from './server.js';
