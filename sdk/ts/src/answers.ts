// The answers a reconciler gives ork (ok, requeue, error) and the check of an answer
// against what ork accepts.

import { REQUIRED_FIELDS, type IntentType, type Resource, type Result } from "./wire.gen.js";

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
  if (kind !== undefined && kind !== null && kind !== "" && kind !== "ok" && kind !== "requeue" && kind !== "error") {
    return `result: ${JSON.stringify(kind)} is not ok, requeue or error`;
  }
  const after = res["requeueAfter"];
  if (after !== undefined && after !== null && after !== "" && !(typeof after === "string" && isGoDuration(after))) {
    return `requeueAfter: ${JSON.stringify(after)} is not a non-negative duration`;
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
