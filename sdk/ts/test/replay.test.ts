import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { reconcile } from "../examples/webapp.js";
import * as ork from "../src/index.js";

// The tests run compiled, from build/test: the recordings stay in the sources' test/testdata.
const TESTDATA = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "test", "testdata");
const RECORDING = join(TESTDATA, "recording");

const noAuth = (fn: ork.Reconcile): ork.Handler => new ork.Handler(fn, { noAuth: true });

describe("diff", () => {
  it("names the differing fields", () => {
    const dep = { type: "deployment", fields: { name: "web", image: "nginx", replicas: 2 } };
    const cases: [string, unknown, unknown, string[]][] = [
      ["same", { result: "ok", resources: [dep] }, { resources: [dep] }, []],
      ["result", { result: "ok" }, { result: "requeue" }, ["result"]],
      ["requeueAfter by value", { requeueAfter: "60s" }, { requeueAfter: "1m" }, []],
      ["requeueAfter", { requeueAfter: "1m30s" }, {}, ["requeueAfter"]],
      ["empty status is none", { status: {} }, { status: null }, []],
      ["status field", { status: { phase: "Ready", n: 1 } }, { status: { phase: "Pending", n: 1.0 } }, ["status.phase"]],
      ["dotted key", { status: { "a.b": 1 } }, { status: { "a.b": 2 } }, ["status.a\\.b"]],
      ["list lengths", { status: { l: [1, 2] } }, { status: { l: [1] } }, ["status.l"]],
      ["list element", { status: { l: [1, 2] } }, { status: { l: [1, 3] } }, ["status.l[1]"]],
      [
        "intent field",
        { resources: [dep] },
        { resources: [{ type: "deployment", fields: { name: "web", image: "nginx", replicas: 3 } }] },
        ["objects[apps/v1 Deployment default/web].fields.replicas"],
      ],
      [
        "a string spelling the number",
        { resources: [dep] },
        { resources: [{ type: "deployment", fields: { name: "web", image: "nginx", replicas: "2" } }] },
        [],
      ],
      ["object on one side", { resources: [dep] }, { resources: [] }, ["objects[apps/v1 Deployment default/web]"]],
      [
        "full object, server fields ignored",
        { resources: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", uid: "1" }, data: { a: "1" } }] },
        { resources: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { a: "2" } }] },
        ["objects[v1 ConfigMap default/c].data.a"],
      ],
    ];
    for (const [name, recorded, answer, want] of cases) {
      assert.deepEqual(ork.diff(recorded, answer, "default"), want, name);
    }
  });

  it("is bounded", () => {
    const a: { [k: string]: number } = {};
    const b: { [k: string]: number } = {};
    for (let i = 0; i < 60; i++) {
      a[`k${String(i).padStart(2, "0")}`] = 1;
      b[`k${String(i).padStart(2, "0")}`] = 2;
    }
    const got = ork.diff({ status: a }, { status: b }, "");
    assert.equal(got.length, 51);
    assert.equal(got[50], "… and 10 more");
  });
});

describe("replay", () => {
  it("of the example's recording passes", async () => {
    const results = await ork.assertReplay(noAuth(reconcile), RECORDING);
    assert.ok(results.length > 0);
    for (const r of results) {
      assert.ok(r.compared, r.file);
      assert.deepEqual(r.divergences, [], r.file);
    }
  });

  it("sends the token and a dry run", async () => {
    const seen: boolean[] = [];
    const spy: ork.Reconcile = (req) => {
      seen.push(req.prepared.dryRun ?? false);
      return reconcile(req);
    };
    const h = new ork.Handler(spy, { tokenFile: join(TESTDATA, "token") });
    assert.deepEqual(new Set((await ork.replay(h, RECORDING, { token: "t0ken" })).map((r) => r.status)), new Set([200]));
    assert.deepEqual(new Set((await ork.replay(h, RECORDING, { token: "wrong" })).map((r) => r.status)), new Set([401]));
    assert.ok(seen.length > 0 && seen.every(Boolean));
  });

  it("fails after a change of the logic, naming the field", async () => {
    const moreReplicas: ork.Reconcile = (req) => {
      const res = reconcile(req);
      const first = res.resources?.[0] as ork.Intent;
      (first.fields as ork.DeploymentFields).replicas = ((first.fields as ork.DeploymentFields).replicas ?? 0) + 1;
      return res;
    };
    for (const r of await ork.replay(noAuth(moreReplicas), RECORDING)) {
      assert.deepEqual(r.divergences, ["objects[apps/v1 Deployment default/my-webapp].fields.replicas"], r.file);
    }
    await assert.rejects(ork.assertReplay(noAuth(moreReplicas), RECORDING), /fields\.replicas/);
  });
});
