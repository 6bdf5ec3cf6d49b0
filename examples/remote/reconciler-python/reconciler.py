#!/usr/bin/env python3
"""An example remote reconciler for ork: it answers every PreparedRequest for a WebApp with a
Deployment and a Service built from the WebApp's spec. Standard library only; the same logic
as ../reconciler-go/main.go.

    RECONCILER_TOKEN=demo-token-change-me python3 reconciler.py --addr 127.0.0.1:8088
"""
import argparse
import hmac
import json
import logging
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1 << 20  # ork's requests are small; refuse anything absurd


def reconcile(req):
    """The whole business logic: one Deployment and one Service per WebApp."""
    if req.get("prepared", {}).get("deleting"):
        # Children carry ownerReferences: the garbage collector removes them.
        return {"result": "ok"}
    obj = req.get("object", {})
    spec, name = obj.get("spec", {}), obj.get("metadata", {}).get("name", "")
    image = spec.get("image")
    if not image:
        return {"result": "error", "error": "spec.image is required"}
    port = spec.get("port") or 8080
    replicas = spec.get("replicas") or 1
    return {
        "result": "ok",
        "status": {"phase": "Ready", "replicas": replicas, "url": f"http://{name}-svc"},
        "resources": [
            {"type": "deployment",
             "fields": {"name": name, "image": image, "replicas": replicas, "port": port}},
            {"type": "service",
             "fields": {"name": f"{name}-svc", "port": 80, "targetPort": port}},
        ],
    }


class Handler(BaseHTTPRequestHandler):
    token = ""  # set in main, before the server starts

    def do_POST(self):
        if self.path != "/reconcile":
            self.reply(404, "text/plain", b"not found\n")
            return
        want = f"Bearer {self.token}".encode()
        got = self.headers.get("Authorization", "").encode()
        if not hmac.compare_digest(got, want):  # constant time, like subtle.ConstantTimeCompare
            self.reply(401, "text/plain", b"unauthorized\n")
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            if length > MAX_BODY:
                raise ValueError(f"body of {length} bytes exceeds {MAX_BODY}")
            req = json.loads(self.rfile.read(length))
            if not isinstance(req, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as e:  # json.JSONDecodeError is a ValueError
            self.reply(400, "text/plain", f"bad request: {e}\n".encode())
            return
        logging.info("reconcile %s (trigger %s, args %s)", req.get("key"),
                     req.get("prepared", {}).get("trigger"), req.get("args"))
        self.reply(200, "application/json", json.dumps(reconcile(req)).encode() + b"\n")

    def reply(self, code, content_type, body):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        pass  # no access log: do_POST logs one line per reconcile, like the Go example


def main():
    parser = argparse.ArgumentParser(description="Example remote reconciler for ork.")
    parser.add_argument("--addr", default="127.0.0.1:8088", help="listen address")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    Handler.token = os.environ.get("RECONCILER_TOKEN", "")
    if not Handler.token:
        sys.exit("set RECONCILER_TOKEN to the token stored in the Secret ork reads")
    host, _, port = args.addr.rpartition(":")
    server = ThreadingHTTPServer((host, int(port)), Handler)
    logging.info("listening on %s:%d", *server.server_address[:2])
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
