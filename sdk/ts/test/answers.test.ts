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

  it("goDuration refuses a negative duration", () => {
    assert.throws(() => ork.goDuration(-1), RangeError);
    assert.equal(ork.goDuration(0), "0s");
  });

  it("validate names what ork would refuse", () => {
    const cases: [string, unknown, string | undefined][] = [
      ["ok", ork.ok({ resources: [ork.service({ name: "s", port: 80 })] }), undefined],
      ["empty answer", {}, undefined],
      ["not an object", "ok", "the answer is not an object"],
      ["unknown result", { result: "done" }, 'result: "done" is not ok, requeue or error'],
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
