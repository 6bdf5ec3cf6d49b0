import assert from "node:assert/strict";
import { describe, it } from "node:test";

import * as ork from "../src/index.js";

describe("answers", () => {
  it("build ok, requeue and error answers", () => {
    const dep = ork.deployment({ name: "web", image: "nginx", replicas: 0 });
    const cases: [string, ork.Result, ork.Result][] = [
      ["ok", ork.ok(), { result: "ok" }],
      ["ok with status", ork.ok({ status: { phase: "Ready" } }), { result: "ok", status: { phase: "Ready" } }],
      ["no objects is not no opinion", ork.ok({ resources: [] }), { result: "ok", resources: [] }],
      [
        "ok with a requeue",
        ork.ok({ resources: [dep], requeueAfterSeconds: 90 }),
        { result: "ok", resources: [{ type: "deployment", fields: { name: "web", image: "nginx", replicas: 0 } }], requeueAfter: "90s" },
      ],
      ["requeue", ork.requeue(30), { result: "requeue", requeueAfter: "30s" }],
      ["requeue after the backoff", ork.requeue(), { result: "requeue" }],
      ["requeue in ms", ork.requeue(0.25), { result: "requeue", requeueAfter: "250ms" }],
      ["error of a text", ork.error("database down"), { result: "error", error: "database down" }],
      ["error of an Error", ork.error(new TypeError("bad")), { result: "error", error: "bad" }],
      ["error without a message", ork.error(new Error("")), { result: "error", error: "Error" }],
    ];
    for (const [name, got, want] of cases) {
      assert.deepEqual(got, want, name);
    }
  });

  it("builders set forceConflict only when asked", () => {
    assert.deepEqual(ork.configMap({ name: "c", data: {} }), { type: "configmap", fields: { name: "c", data: {} } });
    assert.deepEqual(ork.secret({ name: "s", stringData: { a: "b" } }, { forceConflict: false }), {
      type: "secret",
      fields: { name: "s", stringData: { a: "b" } },
      forceConflict: false,
    });
  });

  it("builds pending answers", () => {
    assert.deepEqual(ork.pending("db-1"), { result: "pending", operation: { id: "db-1" } });
    assert.deepEqual(ork.pending("db-1", 30, { deadlineSeconds: 1800, progress: 0, message: "creating", status: { phase: "Provisioning" } }), {
      result: "pending",
      status: { phase: "Provisioning" },
      operation: { id: "db-1", pollAfter: "30s", deadline: "1800s", progress: 0, message: "creating" },
    });
    assert.throws(() => ork.pending(""), RangeError);
    assert.throws(() => ork.pending("db-1", undefined, { progress: 101 }), RangeError);
  });

  it("operationKey is stable for a generation", () => {
    const req: ork.PreparedRequest = {
      key: "default/w",
      gvk: { Group: "g", Version: "v1", Kind: "K" },
      object: { metadata: { uid: "0b5e-uid" } },
      args: {},
      prepared: { trigger: "create", attempt: 1, generation: 3, deleting: false },
    };
    assert.equal(ork.operationKey(req), "0b5e-uid/3");
    req.prepared.operation = { id: "db-1", key: "0b5e-uid/3/db-1", startedAt: "2026-05-01T12:00:00Z", polls: 0, superseded: false, timedOut: false, generation: 3 };
    assert.equal(ork.operationKey(req), "0b5e-uid/3/db-1");
    req.prepared.operation.superseded = true;
    req.prepared.generation = 4;
    assert.equal(ork.operationKey(req), "0b5e-uid/4");
  });

  it("goDuration refuses a negative duration", () => {
    assert.throws(() => ork.goDuration(-1), RangeError);
    assert.equal(ork.goDuration(0), "0s");
  });

  it("validate names what ork would refuse", () => {
    const cases: [string, unknown, string | undefined][] = [
      ["ok", ork.ok({ resources: [ork.service({ name: "s", port: 80 })] }), undefined],
      ["empty answer", {}, undefined],
      ["not an object", "ok", "the answer is not an object"],
      ["unknown result", { result: "done" }, 'result: "done" is not ok, requeue, pending or error'],
      ["pending", ork.pending("db-1", 10, { deadlineSeconds: 60, progress: 40 }), undefined],
      ["pending without an operation", { result: "pending" }, "operation: result pending needs an operation"],
      ["an operation with ok", { result: "ok", operation: { id: "x" } }, 'operation: goes only with result pending, not "ok"'],
      ["an operation without an id", { result: "pending", operation: {} }, "operation.id is required"],
      ["progress over 100", { result: "pending", operation: { id: "x", progress: 101 } }, "operation.progress: 101 is not from 0 to 100"],
      ["bad pollAfter", { result: "pending", operation: { id: "x", pollAfter: "10" } }, 'operation.pollAfter: "10" is not a non-negative duration'],
      ["bad duration", { requeueAfter: "30" }, 'requeueAfter: "30" is not a non-negative duration'],
      ["duration", { requeueAfter: "1m30.5s" }, undefined],
      [
        "missing required field",
        { resources: [ork.service({ name: "s", port: 80 }), { type: "deployment", fields: { name: "web", image: "" } }] },
        "resources[1]: deployment: fields.image is required",
      ],
      ["one of", { resources: [{ type: "secret", fields: { name: "s" } }] }, "resources[0]: secret: set fields.data or fields.stringData"],
      ["unknown type", { resources: [{ type: "pod", fields: {} }] }, 'resources[0]: intent type "pod" is unknown'],
      ["full object", { resources: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }] }, undefined],
      ["full object without a name", { resources: [{ apiVersion: "v1", kind: "ConfigMap" }] }, "resources[0]: full object without apiVersion, kind or metadata.name"],
    ];
    for (const [name, res, want] of cases) {
      assert.equal(ork.validate(res), want, name);
    }
  });
});
