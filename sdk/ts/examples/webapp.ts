// The TypeScript SDK's example reconciler: for each WebApp a Deployment and a Service built
// from its spec, as examples/remote/reconciler-python does by hand. It listens on --addr
// (default :8088), reads its token from the file named by RECONCILER_TOKEN_FILE on every
// request, answers /healthz, and exits 0 within 10 s of SIGTERM.

import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

import * as ork from "../src/index.js";

/** The WebApp's spec (examples/remote/crd.yaml). */
export interface WebAppSpec {
  image?: string;
  replicas?: number;
  port?: number;
  environment?: string;
  logLevel?: string;
}

/**
 * The whole business logic: one Deployment and one Service per WebApp. It answers at once;
 * work that would outlast the timeout answers ork.pending(id, pollAfterSeconds) instead, its
 * job keyed on ork.operationKey(req), and ork polls until a final answer
 * (docs/remote-reconciler.md#operations).
 */
export function reconcile(req: ork.PreparedRequest): ork.Result {
  if (req.prepared.deleting) {
    return ork.ok(); // children carry ownerReferences: the garbage collector removes them
  }
  const spec = (req.object.spec ?? {}) as WebAppSpec;
  const name = ork.objectName(req.object);
  if (!spec.image) {
    return ork.error("spec.image is required");
  }
  const port = Number(spec.port || 8080);
  const replicas = Number(spec.replicas || 1);
  return ork.ok({
    status: { phase: "Ready", replicas, url: `http://${name}-svc` },
    resources: [
      ork.deployment({ name, image: spec.image, replicas, port }),
      ork.service({ name: `${name}-svc`, port: 80, targetPort: port }),
    ],
  });
}

const log: ork.Logger = (level, message, detail) => {
  console.error(`${new Date().toISOString()} ${level.toUpperCase()} ${message}${detail === undefined ? "" : ` ${String(detail)}`}`);
};

/** The example's handler: the token of tokenFile, a warning when ork speaks another contract. */
export function newHandler(tokenFile: string): ork.Handler {
  return new ork.Handler(reconcile, {
    tokenFile,
    log,
    onContractMismatch: (v) => log("warn", `ork speaks wire contract ${v}, this SDK ${ork.CONTRACT_VERSION}: update the SDK`),
  });
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { addr: { type: "string", default: ":8088" } } });
  const tokenFile = process.env["RECONCILER_TOKEN_FILE"];
  if (!tokenFile) {
    console.error("webapp: set RECONCILER_TOKEN_FILE to the file holding the token ork sends");
    return 1;
  }
  await ork.serve(newHandler(tokenFile), values.addr, {
    graceMs: 8000,
    onListening: (addr) => console.error(`${new Date().toISOString()} INFO listening on ${addr}`),
  });
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error("webapp:", e);
      process.exitCode = 1;
    },
  );
}
