// The answers a reconciler gives ork (ok, requeue, pending, error) and the check of an
// answer against what ork accepts.

import {
  REQUIRED_FIELDS,
  type IntentType,
  type PendingOperation,
  type PreparedRequest,
  type Resource,
  type Result,
} from "./wire.gen.js";

/** What an ok or requeue answer carries besides its kind. */
export interface AnswerOptions {
  /** The status ork merges into the custom resource's. */
  status?: { [key: string]: unknown };
  /**
   * The objects the custom resource should own. Leaving it out is "no opinion"; [] says "no
   * objects" (with reconcile.remote.prune every child is pruned).
   */
  resources?: readonly Resource[];
  /** Ask for another reconcile after this many seconds (an ok answer too). */
  requeueAfterSeconds?: number;
}

/** A duration as ork reads it (a Go duration): 30 -> "30s", 0.5 -> "500ms". */
export function goDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new RangeError(`a duration is a non-negative number of seconds, not ${seconds}`);
  }
  return Number.isInteger(seconds) ? `${seconds}s` : `${Math.round(seconds * 1000)}ms`;
}

/** A successful answer: ork applies resources and merges status. */
export function ok(opts: AnswerOptions = {}): Result {
  const res: Result = { result: "ok" };
  if (opts.status !== undefined) {
    res.status = opts.status;
  }
  if (opts.resources !== undefined) {
    res.resources = [...opts.resources];
  }
  if (opts.requeueAfterSeconds !== undefined) {
    res.requeueAfter = goDuration(opts.requeueAfterSeconds);
  }
  return res;
}

/**
 * A successful answer that asks ork to reconcile again after `afterSeconds` (none or 0:
 * after ork's per-key backoff).
 */
export function requeue(afterSeconds?: number, opts: Omit<AnswerOptions, "requeueAfterSeconds"> = {}): Result {
  const res = ok(opts);
  res.result = "requeue";
  if (afterSeconds) {
    res.requeueAfter = goDuration(afterSeconds);
  }
  return res;
}

/** What a pending answer carries besides its operation's id and poll delay. */
export interface PendingOptions extends Omit<AnswerOptions, "requeueAfterSeconds"> {
  /** Bounds the operation to this many seconds after it started. */
  deadlineSeconds?: number;
  /** How far the operation is, in percent (0 to 100). */
  progress?: number;
  /** What the operation is doing, shown in the Ready condition. */
  message?: string;
}

/**
 * A long-running operation was started, or goes on: ork applies resources and status, holds
 * the operation on the custom resource (Ready False, reason OperationPending) and calls again
 * after `pollAfterSeconds` (none: ork's default, 10 s; under 1 s counts as 1 s) with
 * prepared.operation, until a final answer (ok or requeue). The id of prepared.operation
 * continues it; another id replaces it.
 */
export function pending(id: string, pollAfterSeconds?: number, opts: PendingOptions = {}): Result {
  if (id === "") {
    throw new RangeError("an operation has an id");
  }
  if (opts.progress !== undefined && !(Number.isInteger(opts.progress) && opts.progress >= 0 && opts.progress <= 100)) {
    throw new RangeError(`progress is a whole number from 0 to 100, not ${opts.progress}`);
  }
  const op: PendingOperation = { id };
  if (pollAfterSeconds !== undefined) {
    op.pollAfter = goDuration(pollAfterSeconds);
  }
  if (opts.deadlineSeconds !== undefined) {
    op.deadline = goDuration(opts.deadlineSeconds);
  }
  if (opts.progress !== undefined) {
    op.progress = opts.progress;
  }
  if (opts.message !== undefined) {
    op.message = opts.message;
  }
  const res = ok({ status: opts.status, resources: opts.resources });
  if (opts.status === undefined) {
    delete res.status;
  }
  res.result = "pending";
  res.operation = op;
  return res;
}

/**
 * The stable key of the work a request asks for: prepared.operation.key while ork holds an
 * operation for the request's generation, else "<metadata.uid>/<prepared.generation>" (no
 * operation, or a superseded one). Key the external work you start on it: when ork asks
 * again for the same generation without prepared.operation (it crashed before persisting
 * your pending answer), answer pending with the operation you already started, not a second
 * one.
 */
export function operationKey(req: PreparedRequest): string {
  const held = req.prepared.operation;
  if (held !== undefined && !held.superseded) {
    return held.key;
  }
  const md = req.object.metadata;
  const uid = isObject(md) && typeof md["uid"] === "string" ? md["uid"] : "";
  return `${uid}/${req.prepared.generation}`;
}

/**
 * A failed reconcile: ork applies nothing, shows the message in the Ready condition and
 * retries with backoff.
 */
export function error(message: unknown): Result {
  let text: string;
  if (message instanceof Error) {
    text = message.message || message.name;
  } else {
    text = String(message);
  }
  return { result: "error", error: text || "unknown error" };
}

const durationRE = /^(0|([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$/;

/** Whether d is a non-negative Go duration ("1m30s", "500ms", "0"). */
export function isGoDuration(d: string): boolean {
  return d === "0" || durationRE.test(d);
}

function isObject(v: unknown): v is { [key: string]: unknown } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function missing(v: unknown): boolean {
  return v === undefined || v === null || v === "";
}

/**
 * What ork would refuse in an answer: an unknown result, a requeueAfter that is not a
 * duration, or a resource that misses a required field (named resources[i]: <type>:
 * fields.<name> is required). undefined when there is nothing.
 */
export function validate(res: unknown): string | undefined {
  if (!isObject(res)) {
    return "the answer is not an object";
  }
  const kind = res["result"];
  if (kind !== undefined && kind !== null && kind !== "" && kind !== "ok" && kind !== "requeue" && kind !== "pending" && kind !== "error") {
    return `result: ${JSON.stringify(kind)} is not ok, requeue, pending or error`;
  }
  const after = checkDuration("requeueAfter", res["requeueAfter"]);
  if (after !== undefined) {
    return after;
  }
  const op = validateOperation(kind, res["operation"]);
  if (op !== undefined) {
    return op;
  }
  const resources = res["resources"];
  if (resources === undefined || resources === null) {
    return undefined;
  }
  if (!Array.isArray(resources)) {
    return "resources: not a list";
  }
  for (const [i, entry] of resources.entries()) {
    const why = validateResource(entry);
    if (why !== undefined) {
      return `resources[${i}]: ${why}`;
    }
  }
  return undefined;
}

function validateResource(entry: unknown): string | undefined {
  if (!isObject(entry)) {
    return "not an object";
  }
  if (!("fields" in entry)) {
    const md = entry["metadata"];
    if (missing(entry["apiVersion"]) || missing(entry["kind"]) || !isObject(md) || missing(md["name"])) {
      return "full object without apiVersion, kind or metadata.name";
    }
    return undefined;
  }
  const type = entry["type"];
  if (typeof type !== "string" || !(type in REQUIRED_FIELDS)) {
    return `intent type ${JSON.stringify(type)} is unknown`;
  }
  const fields = entry["fields"];
  if (!isObject(fields)) {
    return `${type}: fields is not an object`;
  }
  const req = REQUIRED_FIELDS[type as IntentType];
  for (const name of req.all) {
    if (missing(fields[name])) {
      return `${type}: fields.${name} is required`;
    }
  }
  if (req.oneOf.length > 0 && req.oneOf.every((name) => missing(fields[name]))) {
    return `${type}: set fields.${req.oneOf.join(" or fields.")}`;
  }
  return undefined;
}

function checkDuration(field: string, d: unknown): string | undefined {
  if (d !== undefined && d !== null && d !== "" && !(typeof d === "string" && isGoDuration(d))) {
    return `${field}: ${JSON.stringify(d)} is not a non-negative duration`;
  }
  return undefined;
}

// validateOperation checks what ork checks of an operation: it comes with "pending" and only
// then, with an id of at most 256 characters, durations and a progress from 0 to 100.
function validateOperation(kind: unknown, op: unknown): string | undefined {
  if (op === undefined || op === null) {
    return kind === "pending" ? "operation: result pending needs an operation" : undefined;
  }
  if (kind !== "pending") {
    return `operation: goes only with result pending, not ${JSON.stringify(kind ?? "")}`;
  }
  if (!isObject(op)) {
    return "operation: not an object";
  }
  const id = op["id"];
  if (typeof id !== "string" || id === "") {
    return "operation.id is required";
  }
  if ([...id].length > 256) {
    return "operation.id is longer than 256 characters";
  }
  const progress = op["progress"];
  if (progress !== undefined && progress !== null && !(typeof progress === "number" && Number.isInteger(progress) && progress >= 0 && progress <= 100)) {
    return `operation.progress: ${JSON.stringify(progress)} is not from 0 to 100`;
  }
  return checkDuration("operation.pollAfter", op["pollAfter"]) ?? checkDuration("operation.deadline", op["deadline"]);
}
