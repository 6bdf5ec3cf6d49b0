// Typed SDK for ork's remote reconcilers. The request and answer types are generated from
// ork's schema/*.json (wire.gen.ts); the builders (deployment(...), service(...)) make
// intent entries, ok/requeue/pending/error make answers, Handler turns a reconcile function into
// ork's wire format on node:http, serve runs it, replay checks it against a recording.
// No runtime dependencies.

export * from "./wire.gen.js";
export {
  error,
  goDuration,
  isGoDuration,
  ok,
  operationKey,
  pending,
  requeue,
  validate,
  type AnswerOptions,
  type PendingOptions,
} from "./answers.js";
export {
  CONTRACT_VERSION_HEADER,
  DEFAULT_MAX_BODY_BYTES,
  Handler,
  major,
  type HandlerOptions,
  type HandlerRequest,
  type HandlerResponse,
  type Logger,
  type Reconcile,
} from "./handler.js";
export { objectName, objectNamespace } from "./request.js";
export { assertReplay, diff, load, replay, type Exchange, type ReplayOptions, type ReplayResult } from "./replay.js";
export { serve, splitAddr, type ServeOptions } from "./serve.js";
