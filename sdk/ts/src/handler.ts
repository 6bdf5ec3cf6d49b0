// Serve a reconcile function to ork over node:http: the bearer token checked in constant
// time against a token file read on every request, a body limit, /healthz, and a graceful
// shutdown.

import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";

import { error, validate } from "./answers.js";
import { CONTRACT_VERSION, type PreparedRequest, type Result } from "./wire.gen.js";

/** The header in which ork sends its contract version; the handler answers with its own. */
export const CONTRACT_VERSION_HEADER = "Ork-Contract-Version";

/** The default limit of a request body: 16 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 16 << 20;

/**
 * A reconcile function: the request in, the answer out (or a promise of it). A thrown error
 * is answered as error(thrown). signal aborts when ork gives up on the call (the connection
 * closes) or the server's shutdown grace is over.
 */
export type Reconcile = (req: PreparedRequest, signal: AbortSignal) => Result | Promise<Result>;

/** Where the handler tells what it cannot tell ork (an unreadable token file, a throw). */
export type Logger = (level: "error" | "warn", message: string, detail?: unknown) => void;

/** Options of a Handler. */
export interface HandlerOptions {
  /**
   * The file holding the token ork sends (the Secret of the Katalog's auth.secretRef,
   * mounted); read on every request, so a rotated Secret needs no restart. Required unless
   * noAuth.
   */
  tokenFile?: string;
  /** Accept requests without a token; default false. Only for tests and loopback. */
  noAuth?: boolean;
  /**
   * The Katalog's auth.header; default "Authorization", which carries "Bearer <token>".
   * Any other header carries the bare token, as ork sends it.
   */
  authHeader?: string;
  /** Where ork POSTs; default "/reconcile". */
  path?: string;
  /** Answers GET with 200 "ok"; default "/healthz". */
  healthPath?: string;
  /** The limit of a request body; a larger one is answered 413. Default 16 MiB. */
  maxBodyBytes?: number;
  /** Default: nothing is logged. */
  log?: Logger;
  /**
   * Called with ork's Ork-Contract-Version when its major differs from CONTRACT_VERSION's:
   * ork speaks a contract this SDK was not built for. Default: the request is served
   * anyway, silently.
   */
  onContractMismatch?: (orkVersion: string) => void;
}

/** One HTTP request, whatever the server. Header names are matched case-insensitively. */
export interface HandlerRequest {
  method: string;
  path: string;
  headers: { [name: string]: string | string[] | undefined };
  body: Uint8Array;
  signal?: AbortSignal;
}

/** One HTTP answer, whatever the server. */
export interface HandlerResponse {
  status: number;
  headers: { [name: string]: string };
  body: string;
}

function text(status: number, message: string, extra: { [name: string]: string } = {}): HandlerResponse {
  return { status, headers: { "Content-Type": "text/plain; charset=utf-8", ...extra }, body: message + "\n" };
}

/** The major part of a contract version: "1" of "1.2". */
export function major(version: string): string {
  return version.trim().split(".", 1)[0] ?? "";
}

function header(headers: HandlerRequest["headers"], name: string): string {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === lower) {
      return Array.isArray(v) ? v.join(", ") : (v ?? "");
    }
  }
  return "";
}

// sameSecret compares two strings in constant time: their SHA-256 digests have one length
// whatever the token's, so neither the content nor the length leaks through timing.
function sameSecret(got: string, want: string): boolean {
  const a = createHash("sha256").update(got).digest();
  const b = createHash("sha256").update(want).digest();
  return timingSafeEqual(a, b);
}

const noop: Logger = () => {};

/** Turns a reconcile function into ork's wire format. */
export class Handler {
  readonly path: string;
  readonly healthPath: string;
  readonly authHeader: string;
  readonly maxBodyBytes: number;
  private readonly reconcile: Reconcile;
  private readonly opts: HandlerOptions;
  private readonly log: Logger;

  constructor(reconcile: Reconcile, opts: HandlerOptions) {
    if (!opts.tokenFile && !opts.noAuth) {
      throw new Error("no tokenFile (set noAuth to accept requests without a token)");
    }
    this.reconcile = reconcile;
    this.opts = opts;
    this.path = opts.path ?? "/reconcile";
    this.healthPath = opts.healthPath ?? "/healthz";
    this.authHeader = opts.authHeader ?? "Authorization";
    this.maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.log = opts.log ?? noop;
  }

  /** Answers one request: POST path to the reconcile function, GET healthPath with "ok". */
  async handle(req: HandlerRequest): Promise<HandlerResponse> {
    if (req.path === this.healthPath) {
      return req.method === "GET" || req.method === "HEAD" ? text(200, "ok") : text(405, "Method Not Allowed");
    }
    if (req.path !== this.path) {
      return text(404, "404 page not found");
    }
    if (req.method !== "POST") {
      return text(405, "Method Not Allowed", { Allow: "POST" });
    }
    const denied = await this.authorize(req.headers);
    if (denied) {
      return denied;
    }
    if (req.body.byteLength > this.maxBodyBytes) {
      return text(413, `request body over ${this.maxBodyBytes} bytes`);
    }
    const theirs = header(req.headers, CONTRACT_VERSION_HEADER);
    if (theirs && major(theirs) !== major(CONTRACT_VERSION)) {
      this.opts.onContractMismatch?.(theirs);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(req.body).toString("utf8"));
    } catch (e) {
      return text(400, `not a PreparedRequest: ${(e as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || typeof (parsed as { prepared?: unknown }).prepared !== "object") {
      return text(400, "not a PreparedRequest: no prepared object");
    }
    const res = await this.call(parsed as PreparedRequest, req.signal ?? new AbortController().signal);
    return {
      status: 200,
      headers: { "Content-Type": "application/json", [CONTRACT_VERSION_HEADER]: CONTRACT_VERSION },
      body: JSON.stringify(res) + "\n",
    };
  }

  // call runs the reconcile function; a throw is answered as an error result (and logged),
  // so that ork retries with backoff, and an answer ork would refuse as an error naming why.
  private async call(req: PreparedRequest, signal: AbortSignal): Promise<Result> {
    let res: unknown;
    try {
      res = await this.reconcile(req, signal);
    } catch (e) {
      this.log("error", `reconcile ${req.key}`, e);
      return error(e);
    }
    const why = validate(res);
    if (why !== undefined) {
      return error(`the reconciler's answer is invalid: ${why}`);
    }
    try {
      JSON.stringify(res);
    } catch (e) {
      return error(`the reconciler's answer does not encode: ${(e as Error).message}`);
    }
    return res as Result;
  }

  private async authorize(headers: HandlerRequest["headers"]): Promise<HandlerResponse | undefined> {
    if (this.opts.noAuth) {
      return undefined;
    }
    let token: string;
    try {
      token = (await readFile(this.opts.tokenFile as string, "utf8")).trim();
    } catch (e) {
      this.log("error", "token file", e);
      return text(500, "Internal Server Error");
    }
    if (!token) {
      this.log("error", `token file ${this.opts.tokenFile} is empty`);
      return text(500, "Internal Server Error");
    }
    const want = this.authHeader.toLowerCase() === "authorization" ? `Bearer ${token}` : token;
    if (!sameSecret(header(headers, this.authHeader), want)) {
      return text(401, "Unauthorized");
    }
    return undefined;
  }

  /**
   * Serves one node:http request: the body is read up to maxBodyBytes (a larger one is
   * answered 413 and the connection closed). signal defaults to one that aborts when the
   * connection closes before the answer is written.
   */
  async serveHTTP(req: IncomingMessage, res: ServerResponse, signal?: AbortSignal): Promise<void> {
    if (!signal) {
      const ac = new AbortController();
      res.on("close", () => {
        if (!res.writableFinished) {
          ac.abort();
        }
      });
      signal = ac.signal;
    }
    const path = (req.url ?? "/").split("?", 1)[0] ?? "/";
    let answer: HandlerResponse;
    const body = await readBody(req, this.maxBodyBytes);
    if (body === undefined) {
      answer = text(413, `request body over ${this.maxBodyBytes} bytes`, { Connection: "close" });
    } else {
      answer = await this.handle({ method: req.method ?? "GET", path, headers: req.headers as IncomingHttpHeaders, body, signal });
    }
    if (res.destroyed) {
      return;
    }
    const data = Buffer.from(answer.body, "utf8");
    res.writeHead(answer.status, { ...answer.headers, "Content-Length": String(data.byteLength) });
    res.end(req.method === "HEAD" ? undefined : data);
  }

  /** The handler as a node:http request listener: http.createServer(handler.listener). */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    this.serveHTTP(req, res).catch((e: unknown) => {
      this.log("error", "serve", e);
      res.destroy();
    });
  };
}

// readBody reads a request body; undefined as soon as it is over limit (the answer then
// closes the connection, so the rest is never read).
function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers["content-length"] ?? "0") > limit) {
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      if (over) {
        return;
      }
      size += chunk.byteLength;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(over ? undefined : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
