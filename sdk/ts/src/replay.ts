// Replay what ork recorded (ork run --record) against a Handler and compare the answers as
// ork rollout diff does.

import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";

import { CONTRACT_VERSION_HEADER, type Handler } from "./handler.js";

const EXCHANGE_VERSION = "ork.exchange/v1";
const MAX_PATHS = 50;

// kinds are the apiVersion and kind ork builds for each built-in intent type.
const kinds: { [type: string]: [string, string] } = {
  configmap: ["v1", "ConfigMap"],
  cronjob: ["batch/v1", "CronJob"],
  daemonset: ["apps/v1", "DaemonSet"],
  deployment: ["apps/v1", "Deployment"],
  ingress: ["networking.k8s.io/v1", "Ingress"],
  job: ["batch/v1", "Job"],
  persistentvolumeclaim: ["v1", "PersistentVolumeClaim"],
  secret: ["v1", "Secret"],
  service: ["v1", "Service"],
  serviceaccount: ["v1", "ServiceAccount"],
  statefulset: ["apps/v1", "StatefulSet"],
};

// ignoredMetadata say how an object was written, not what the reconciler asked for.
const ignoredMetadata = ["managedFields", "resourceVersion", "uid", "generation", "creationTimestamp"];

type JSONObject = { [key: string]: unknown };

/** One recorded call, as read from one file of a recording. */
export interface Exchange {
  file: string;
  key: string;
  trigger: string;
  request: JSONObject;
  statusCode: number;
  response: unknown;
}

/** Options of replay. */
export interface ReplayOptions {
  /** Sent as "Bearer <token>" in the handler's auth header (the bare token in another). */
  token?: string;
  /** Send recorded deletes too; default false, as ork rollout diff without --include-delete. */
  includeDelete?: boolean;
}

/**
 * One recorded exchange sent again: the handler's status, whether both answers were a 200
 * to compare, and the differing field paths.
 */
export interface ReplayResult {
  file: string;
  key: string;
  trigger: string;
  status: number;
  compared: boolean;
  divergences: string[];
}

function isObject(v: unknown): v is JSONObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return v === undefined || v === null ? "" : String(v);
}

/** Every *.json file of dir, in name order (the order ork recorded them in). */
export function load(dir: string): Exchange[] {
  const names = readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .sort();
  if (names.length === 0) {
    throw new Error(`replay ${dir}: no recorded exchange (*.json)`);
  }
  return names.map((n) => {
    const file = join(dir, n);
    const e: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (!isObject(e) || e["version"] !== EXCHANGE_VERSION) {
      const v = isObject(e) ? e["version"] : undefined;
      throw new Error(`replay ${file}: version ${JSON.stringify(v)}, want "${EXCHANGE_VERSION}"`);
    }
    if (!isObject(e["request"])) {
      throw new Error(`replay ${file}: no request`);
    }
    return {
      file: basename(file),
      key: str(e["key"]),
      trigger: str(e["trigger"]),
      request: e["request"],
      statusCode: Number(e["statusCode"] ?? 0),
      response: e["response"],
    };
  });
}

/**
 * Sends each recorded request to handler as a dry run (prepared.dryRun: true, as ork
 * rollout diff does) and compares its answer with the recorded one. Recorded deletes are
 * left out unless opts.includeDelete.
 */
export async function replay(handler: Handler, dir: string, opts: ReplayOptions = {}): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for (const x of load(dir)) {
    const req = structuredClone(x.request);
    const prepared = isObject(req["prepared"]) ? req["prepared"] : {};
    req["prepared"] = { ...prepared, dryRun: true };
    const obj = isObject(req["object"]) ? req["object"] : {};
    const md = isObject(obj["metadata"]) ? obj["metadata"] : {};
    if (!opts.includeDelete && (prepared["trigger"] === "delete" || md["deletionTimestamp"])) {
      continue;
    }
    const headers: { [name: string]: string } = { "Content-Type": "application/json", [CONTRACT_VERSION_HEADER]: "1" };
    if (opts.token !== undefined) {
      const auth = handler.authHeader;
      headers[auth] = auth.toLowerCase() === "authorization" ? `Bearer ${opts.token}` : opts.token;
    }
    const body = Buffer.from(JSON.stringify(req), "utf8");
    const res = await handler.handle({ method: "POST", path: handler.path, headers, body });
    const r: ReplayResult = { file: x.file, key: x.key, trigger: x.trigger, status: res.status, compared: false, divergences: [] };
    if (res.status === 200 && x.statusCode === 200 && x.response !== undefined && x.response !== null) {
      r.compared = true;
      r.divergences = diff(x.response, JSON.parse(res.body), str(md["namespace"]));
    }
    results.push(r);
  }
  return results;
}

/**
 * Replays dir against handler and throws an error naming each exchange that was not
 * answered 200 or whose answer differs, with the differing field paths.
 */
export async function assertReplay(handler: Handler, dir: string, opts: ReplayOptions = {}): Promise<ReplayResult[]> {
  const results = await replay(handler, dir, opts);
  const problems: string[] = [];
  for (const r of results) {
    if (r.status !== 200) {
      problems.push(`${r.file}: HTTP ${r.status}`);
    } else if (r.divergences.length > 0) {
      problems.push(`${r.file} (${r.trigger} ${r.key}): ${r.divergences.join(", ")}`);
    }
  }
  if (results.length === 0) {
    problems.push(`${dir}: nothing replayed`);
  }
  if (problems.length > 0) {
    throw new Error(`replay of ${dir} differs from the recording:\n  ${problems.join("\n  ")}`);
  }
  return results;
}

/**
 * The field paths where answer differs from recorded (two decoded results for a custom
 * resource in namespace), sorted, as ork rollout diff names them: result, requeueAfter,
 * status.<path>, objects[<apiVersion> <Kind> <ns>/<name>] and the path of a field under it.
 * ork compares the objects its planner builds; this compares the answers' entries, so
 * under an intent the path names the field written (….fields.replicas). Numbers compare by
 * value; a string that spells a number or a boolean equals it.
 */
export function diff(recorded: unknown, answer: unknown, namespace: string): string[] {
  const r = normalise(recorded, namespace);
  const a = normalise(answer, namespace);
  let paths: string[] = [];
  if (r.result !== a.result) {
    paths.push("result");
  }
  if (r.requeueAfter !== a.requeueAfter) {
    paths.push("requeueAfter");
  }
  diffValue(paths, "status", r.status, a.status);
  for (const name of [...new Set([...r.objects.keys(), ...a.objects.keys()])].sort()) {
    const at = `objects[${name}]`;
    if (!r.objects.has(name) || !a.objects.has(name)) {
      paths.push(at);
    } else {
      diffValue(paths, at, r.objects.get(name), a.objects.get(name));
    }
  }
  paths.sort(compareStrings);
  if (paths.length > MAX_PATHS) {
    const more = paths.length - MAX_PATHS;
    paths = [...paths.slice(0, MAX_PATHS), `… and ${more} more`];
  }
  return paths;
}

// compareStrings orders by UTF-16 code units, as Array.prototype.sort does by default.
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface Normalised {
  result: string;
  requeueAfter: number;
  status: unknown;
  objects: Map<string, unknown>;
}

function normalise(res: unknown, namespace: string): Normalised {
  const r = isObject(res) ? res : {};
  const objects = new Map<string, unknown>();
  const resources = Array.isArray(r["resources"]) ? r["resources"] : [];
  for (const entry of resources) {
    const [name, obj] = identify(entry, namespace);
    objects.set(name, obj);
  }
  const status = isObject(r["status"]) && Object.keys(r["status"]).length > 0 ? r["status"] : null;
  return {
    result: str(r["result"]) || "ok",
    requeueAfter: seconds(str(r["requeueAfter"])),
    status,
    objects,
  };
}

const units: { [unit: string]: number } = { ns: 1e-9, us: 1e-6, "µs": 1e-6, "μs": 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
const unitsByLength = Object.keys(units).sort((a, b) => b.length - a.length);

/** A Go duration in seconds: "1m30s" -> 90. */
function seconds(d: string): number {
  let total = 0;
  let num = "";
  let i = 0;
  outer: while (i < d.length) {
    const c = d.charAt(i);
    if ((c >= "0" && c <= "9") || c === ".") {
      num += c;
      i++;
      continue;
    }
    for (const unit of unitsByLength) {
      if (d.startsWith(unit, i)) {
        total += Number(num || "0") * (units[unit] ?? 0);
        num = "";
        i += unit.length;
        continue outer;
      }
    }
    throw new Error(`requeueAfter ${JSON.stringify(d)} is not a duration`);
  }
  if (num !== "" && num !== "0") {
    throw new Error(`requeueAfter ${JSON.stringify(d)}: a number without a unit`);
  }
  return total;
}

function identify(entry: unknown, namespace: string): [string, unknown] {
  const e = isObject(entry) ? entry : {};
  const fields = e["fields"];
  if (isObject(fields)) {
    const type = str(e["type"]);
    let gk: [string, string] | undefined = kinds[type];
    if (type === "custom") {
      gk = [str(fields["apiVersion"]), str(fields["kind"])];
    }
    if (gk === undefined) {
      throw new Error(`unknown intent type ${JSON.stringify(type)}`);
    }
    const ns = str(fields["namespace"]) || namespace;
    const obj: JSONObject = { fields };
    if (e["forceConflict"] !== undefined && e["forceConflict"] !== null) {
      obj["forceConflict"] = e["forceConflict"];
    }
    return [`${gk[0]} ${gk[1]} ${ns}/${str(fields["name"])}`, obj];
  }
  const md: JSONObject = isObject(e["metadata"]) ? { ...e["metadata"] } : {};
  const ns = str(md["namespace"]) || namespace;
  const name = `${str(e["apiVersion"])} ${str(e["kind"])} ${ns}/${str(md["name"])}`;
  for (const k of ignoredMetadata) {
    delete md[k];
  }
  return [name, { ...e, metadata: md }];
}

function diffValue(paths: string[], at: string, a: unknown, b: unknown): void {
  if (isObject(a) && isObject(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      diffValue(paths, `${at}.${k.replaceAll(".", "\\.")}`, a[k], b[k]);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((x, i) => diffValue(paths, `${at}[${i}]`, x, b[i]));
    return;
  }
  if (!equalScalar(a, b)) {
    paths.push(at);
  }
}

function equalScalar(a: unknown, b: unknown): boolean {
  if (a === b || (a === undefined && b === null) || (a === null && b === undefined)) {
    return true;
  }
  const ta = scalarText(a);
  return ta !== undefined && ta === scalarText(b);
}

const numberRE = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** The canonical text of a number, a boolean, or a string that spells one. */
function scalarText(v: unknown): string | undefined {
  if (typeof v === "boolean") {
    return String(v);
  }
  if (typeof v === "number") {
    return String(v);
  }
  if (typeof v === "string") {
    const s = v.trim();
    if (numberRE.test(s)) {
      return String(Number(s));
    }
    if (["1", "t", "T", "TRUE", "true", "True"].includes(s)) {
      return "true";
    }
    if (["0", "f", "F", "FALSE", "false", "False"].includes(s)) {
      return "false";
    }
  }
  return undefined;
}
