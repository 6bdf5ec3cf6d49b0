// What the compiler refuses is the point of the generated types: each @ts-expect-error below
// fails `tsc` if the line it marks ever type-checks.

import assert from "node:assert/strict";
import { it } from "node:test";

import * as ork from "../src/index.js";

it("the generated types refuse misspelled, missing and mistyped fields", () => {
  const entries: ork.Resource[] = [
    // @ts-expect-error: imgae is not a field of a deployment
    ork.deployment({ name: "web", imgae: "nginx" }),
    // @ts-expect-error: image is required
    ork.deployment({ name: "web" }),
    // @ts-expect-error: replicas is a number, not text
    ork.deployment({ name: "web", image: "nginx", replicas: "2" }),
    // @ts-expect-error: a Service type is one of the schema's enum
    ork.service({ name: "s", port: 80, type: "ExternalName" }),
    ork.service({ name: "s", port: 80, targetPort: "http", type: "NodePort" }),
    ork.persistentVolumeClaim({ name: "data", storage: "1Gi", accessModes: ["ReadWriteOnce"] }),
  ];
  assert.equal(entries.length, 6);
  assert.equal(ork.CONTRACT_VERSION, "1.2");
  // @ts-expect-error: a result is one of ok, requeue, pending, error
  const bad: ork.Result = { result: "done" };
  assert.ok(bad);
});
