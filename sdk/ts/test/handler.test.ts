import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";

import * as ork from "../src/index.js";

const REQUEST: ork.PreparedRequest = {
  key: "default/web",
  gvk: { Group: "myorg.io", Version: "v1", Kind: "WebApp" },
  object: { apiVersion: "myorg.io/v1", kind: "WebApp", metadata: { name: "web", namespace: "default" } },
  args: {},
  prepared: { trigger: "create", attempt: 1, generation: 1, deleting: false },
};
const BODY = Buffer.from(JSON.stringify(REQUEST));

const dir = mkdtempSync(join(tmpdir(), "ork-reconciler-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function tokenFile(token: string): string {
  const path = join(dir, `token-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, token + "\n");
  return path;
}

const okStatus: ork.Reconcile = (req) => ork.ok({ status: { name: ork.objectName(req.object) } });

function post(h: ork.Handler, headers: { [name: string]: string }, body: Uint8Array = BODY): Promise<ork.HandlerResponse> {
  return h.handle({ method: "POST", path: "/reconcile", headers, body });
}

describe("Handler", () => {
  it("checks the token", async () => {
    const file = tokenFile("s3cret");
    const cases: [string, string, { [name: string]: string }, number][] = [
      ["bearer token", "Authorization", { Authorization: "Bearer s3cret" }, 200],
      ["header name in any case", "Authorization", { authorization: "Bearer s3cret" }, 200],
      ["no header", "Authorization", {}, 401],
      ["wrong token", "Authorization", { Authorization: "Bearer wrong" }, 401],
      ["a longer token", "Authorization", { Authorization: "Bearer s3cret2" }, 401],
      ["without Bearer", "Authorization", { Authorization: "s3cret" }, 401],
      ["custom header, bare token", "X-Token", { "x-token": "s3cret" }, 200],
      ["custom header with Bearer", "X-Token", { "X-Token": "Bearer s3cret" }, 401],
    ];
    for (const [name, authHeader, headers, want] of cases) {
      const h = new ork.Handler(okStatus, { tokenFile: file, authHeader });
      assert.equal((await post(h, headers)).status, want, name);
    }
  });

  it("reads the token file on every request", async () => {
    const file = tokenFile("s3cret");
    const logged: string[] = [];
    const h = new ork.Handler(okStatus, { tokenFile: file, log: (_, m) => logged.push(m) });
    assert.equal((await post(h, { Authorization: "Bearer s3cret" })).status, 200);
    writeFileSync(file, "new");
    assert.equal((await post(h, { Authorization: "Bearer s3cret" })).status, 401);
    assert.equal((await post(h, { Authorization: "Bearer new" })).status, 200);
    rmSync(file);
    assert.equal((await post(h, { Authorization: "Bearer new" })).status, 500);
    assert.deepEqual(logged, ["token file"]);
  });

  it("needs a token file or noAuth", () => {
    assert.throws(() => new ork.Handler(okStatus, {}), /no tokenFile/);
  });

  it("answers", async () => {
    const boom: ork.Reconcile = () => {
      throw new Error("database down");
    };
    const rejects: ork.Reconcile = () => Promise.reject(new Error("timeout"));
    const invalid: ork.Reconcile = () => ork.ok({ resources: [{ type: "deployment", fields: { name: "web" } }] });
    const notAResult = (() => "ok") as unknown as ork.Reconcile;
    const cases: [string, ork.Reconcile, string, string, Uint8Array, number, unknown][] = [
      ["ok with status", okStatus, "POST", "/reconcile", BODY, 200, { result: "ok", status: { name: "web" } }],
      ["health", okStatus, "GET", "/healthz", Buffer.alloc(0), 200, "ok"],
      ["GET of the reconcile path", okStatus, "GET", "/reconcile", Buffer.alloc(0), 405, undefined],
      ["unknown path", okStatus, "POST", "/other", BODY, 404, undefined],
      ["no JSON", okStatus, "POST", "/reconcile", Buffer.from("{"), 400, "not a PreparedRequest"],
      ["no prepared", okStatus, "POST", "/reconcile", Buffer.from("{}"), 400, "no prepared"],
      ["over the limit", okStatus, "POST", "/reconcile", Buffer.concat([Buffer.alloc(101, " "), BODY]), 413, "over"],
      ["throw", boom, "POST", "/reconcile", BODY, 200, { result: "error", error: "database down" }],
      ["rejected promise", rejects, "POST", "/reconcile", BODY, 200, { result: "error", error: "timeout" }],
      [
        "an answer ork would refuse",
        invalid,
        "POST",
        "/reconcile",
        BODY,
        200,
        { result: "error", error: "the reconciler's answer is invalid: resources[0]: deployment: fields.image is required" },
      ],
      ["no Result", notAResult, "POST", "/reconcile", BODY, 200, { result: "error", error: "the reconciler's answer is invalid: the answer is not an object" }],
    ];
    for (const [name, fn, method, path, body, wantStatus, want] of cases) {
      const h = new ork.Handler(fn, { noAuth: true, maxBodyBytes: BODY.byteLength + 100 });
      const res = await h.handle({ method, path, headers: {}, body });
      assert.equal(res.status, wantStatus, `${name}: ${res.body}`);
      if (typeof want === "object") {
        assert.deepEqual(JSON.parse(res.body), want, name);
        assert.equal(res.headers["Ork-Contract-Version"], ork.CONTRACT_VERSION, name);
        assert.equal(res.headers["Content-Type"], "application/json", name);
      } else if (typeof want === "string") {
        assert.match(res.body, new RegExp(want), name);
      }
    }
  });

  it("tells of another major contract version", async () => {
    const cases: [string, string | undefined][] = [
      ["", undefined],
      ["1", undefined],
      ["1.4", undefined],
      ["2", "2"],
      ["2.1", "2.1"],
    ];
    for (const [header, want] of cases) {
      const seen: string[] = [];
      const h = new ork.Handler(okStatus, { noAuth: true, onContractMismatch: (v) => seen.push(v) });
      const res = await post(h, header ? { "Ork-Contract-Version": header } : {});
      assert.equal(res.status, 200);
      assert.deepEqual(seen, want ? [want] : [], header);
    }
  });
});

interface Reply {
  status: number;
  body: string;
}

function send(addr: string, method: string, path: string, headers: { [name: string]: string }, body?: Uint8Array): Promise<Reply> {
  const [host, port] = addr.split(":");
  return new Promise((resolve, reject) => {
    const req = request({ host, port: Number(port), method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

function listen(h: ork.Handler, opts: ork.ServeOptions = {}): Promise<{ addr: string; stop: AbortController; done: Promise<void> }> {
  const stop = new AbortController();
  return new Promise((resolve, reject) => {
    const done = ork.serve(h, "127.0.0.1:0", {
      ...opts,
      signals: [],
      signal: stop.signal,
      onListening: (addr) => resolve({ addr, stop, done }),
    });
    done.catch(reject);
  });
}

describe("serve", () => {
  it("serves the handler over HTTP, with the body limit and /healthz", async () => {
    const file = tokenFile("s3cret");
    const h = new ork.Handler(okStatus, { tokenFile: file, maxBodyBytes: BODY.byteLength });
    const { addr, stop, done } = await listen(h);
    const auth = { Authorization: "Bearer s3cret", "Content-Type": "application/json" };
    const reply = await send(addr, "POST", "/reconcile", auth, BODY);
    assert.equal(reply.status, 200, reply.body);
    assert.deepEqual(JSON.parse(reply.body), { result: "ok", status: { name: "web" } });
    assert.equal((await send(addr, "POST", "/reconcile?x=1", auth, Buffer.concat([BODY, Buffer.from(" ")]))).status, 413);
    assert.deepEqual(await send(addr, "GET", "/healthz", {}), { status: 200, body: "ok\n" });
    assert.equal((await send(addr, "POST", "/reconcile", {}, BODY)).status, 401);
    stop.abort();
    await done;
  });

  it("lets an in-flight reconcile finish on stop", async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const slow: ork.Reconcile = async () => {
      started();
      await released;
      return ork.ok({ status: { finished: true } });
    };
    const { addr, stop, done } = await listen(new ork.Handler(slow, { noAuth: true }), { graceMs: 60_000 });
    const reply = send(addr, "POST", "/reconcile", {}, BODY);
    await running;
    stop.abort();
    release();
    assert.deepEqual(JSON.parse((await reply).body), { result: "ok", status: { finished: true } });
    await done;
  });

  it("aborts the reconciles still running after the grace", async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const stuck: ork.Reconcile = (_, signal) =>
      new Promise((resolve) => {
        started();
        signal.addEventListener("abort", () => resolve(ork.error("aborted")));
      });
    const { addr, stop, done } = await listen(new ork.Handler(stuck, { noAuth: true }), { graceMs: 10 });
    const reply = send(addr, "POST", "/reconcile", {}, BODY).catch((e: Error) => e);
    await running;
    stop.abort();
    await done; // resolves only once the stuck call was aborted and its connection closed
    assert.ok((await reply) instanceof Error);
  });

  it("refuses an address that is not host:port", () => {
    assert.throws(() => ork.splitAddr("8088"), /not host:port/);
    assert.deepEqual(ork.splitAddr(":8088"), { host: undefined, port: 8088 });
    assert.deepEqual(ork.splitAddr("[::1]:80"), { host: "::1", port: 80 });
  });
});
