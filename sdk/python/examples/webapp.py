#!/usr/bin/env python3
"""The Python SDK's example reconciler: for each WebApp a Deployment and a Service built
from its spec, as examples/remote/reconciler-python does by hand. It listens on --addr
(default :8088), reads its token from the file named by RECONCILER_TOKEN_FILE on every
request, answers /healthz, and exits 0 within 10 s of SIGTERM."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ork_reconciler as ork  # noqa: E402  (after the path of the uninstalled package)

log = logging.getLogger("webapp")


def reconcile(req: ork.PreparedRequest) -> ork.Result:
    """The whole business logic: one Deployment and one Service per WebApp. It answers at
    once; work that would outlast the timeout answers ork.pending(id, poll_after) instead, its
    job keyed on ork.operation_key(req), and ork polls until a final answer
    (docs/remote-reconciler.md#operations)."""
    if req["prepared"]["deleting"]:
        return ork.ok()  # children carry ownerReferences: the garbage collector removes them
    spec: dict[str, Any] = req["object"].get("spec") or {}
    name = str(req["object"].get("metadata", {}).get("name", ""))
    image = spec.get("image")
    if not image:
        return ork.error("spec.image is required")
    port = int(spec.get("port") or 8080)
    replicas = int(spec.get("replicas") or 1)
    return ork.ok(
        status={"phase": "Ready", "replicas": replicas, "url": f"http://{name}-svc"},
        resources=[
            ork.deployment(name=name, image=str(image), replicas=replicas, port=port),
            ork.service(name=f"{name}-svc", port=80, target_port=port),
        ],
    )


def new_handler(token_file: str) -> ork.Handler:
    def mismatch(version: str) -> None:
        log.warning("ork speaks wire contract %s, this SDK %s: update the SDK", version, ork.CONTRACT_VERSION)

    return ork.Handler(reconcile, token_file=token_file, on_contract_mismatch=mismatch)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--addr", default=":8088", help="listen address")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    token_file = os.environ.get("RECONCILER_TOKEN_FILE")
    if not token_file:
        print("webapp: set RECONCILER_TOKEN_FILE to the file holding the token ork sends", file=sys.stderr)
        return 1
    log.info("listening on %s", args.addr)
    ork.serve(new_handler(token_file), args.addr, grace=8.0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
