"""Serve a reconcile function to ork: over WSGI, or the standard library's HTTP server."""

from __future__ import annotations

import hmac
import json
import logging
import signal
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Mapping

from ._wire import CONTRACT_VERSION, PreparedRequest, Result
from .answers import error

CONTRACT_VERSION_HEADER = "Ork-Contract-Version"
"""The header in which ork sends its contract version; the handler answers with its own."""

DEFAULT_MAX_BODY_BYTES = 16 << 20

Reconcile = Callable[[PreparedRequest], Result]
"""A reconcile function: the request in, the answer out. An exception is answered as
error(exception)."""

_log = logging.getLogger("ork_reconciler")


@dataclass
class Response:
    """An HTTP answer, whatever the server."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def _text(status: int, message: str) -> Response:
    return Response(status, (message + "\n").encode(), {"Content-Type": "text/plain; charset=utf-8"})


def _major(version: str) -> str:
    return version.strip().split(".", 1)[0]


class Handler:
    """Turns a reconcile function into ork's wire format.

    token_file is the file holding the token ork sends (the Secret of auth.secretRef,
    mounted); it is read on every request, so a rotated Secret needs no restart. It is
    required unless no_auth. auth_header is the Katalog's auth.header (default
    Authorization, which carries "Bearer <token>"; any other carries the bare token).
    Requests over max_body_bytes (default 16 MiB) are answered 413. on_contract_mismatch
    hears of an Ork-Contract-Version whose major differs from CONTRACT_VERSION's.
    """

    def __init__(
        self,
        reconcile: Reconcile,
        *,
        token_file: str | None = None,
        no_auth: bool = False,
        auth_header: str = "Authorization",
        path: str = "/reconcile",
        health_path: str = "/healthz",
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        on_contract_mismatch: Callable[[str], None] | None = None,
    ) -> None:
        if not token_file and not no_auth:
            raise ValueError("no token_file (set no_auth=True to accept requests without a token)")
        self.reconcile = reconcile
        self.token_file = token_file
        self.no_auth = no_auth
        self.auth_header = auth_header
        self.path = path
        self.health_path = health_path
        self.max_body_bytes = max_body_bytes
        self.on_contract_mismatch = on_contract_mismatch

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Answer one request; headers are matched case-insensitively."""
        lower = {k.lower(): v for k, v in headers.items()}
        if path == self.health_path:
            return _text(200, "ok") if method in ("GET", "HEAD") else _text(405, "Method Not Allowed")
        if path != self.path:
            return _text(404, "404 page not found")
        if method != "POST":
            return _text(405, "Method Not Allowed")
        denied = self._authorize(lower)
        if denied is not None:
            return denied
        if len(body) > self.max_body_bytes:
            return _text(413, f"request body over {self.max_body_bytes} bytes")
        theirs = lower.get(CONTRACT_VERSION_HEADER.lower(), "")
        if theirs and _major(theirs) != _major(CONTRACT_VERSION) and self.on_contract_mismatch:
            self.on_contract_mismatch(theirs)
        try:
            req = json.loads(body)
        except ValueError as e:
            return _text(400, f"not a PreparedRequest: {e}")
        if not isinstance(req, dict) or not isinstance(req.get("prepared"), dict):
            return _text(400, "not a PreparedRequest: no prepared object")
        res = self._call(req)
        data = json.dumps(res, separators=(",", ":")).encode() + b"\n"
        return Response(200, data, {"Content-Type": "application/json", CONTRACT_VERSION_HEADER: CONTRACT_VERSION})

    def _call(self, req: Any) -> Result:
        try:
            res = self.reconcile(req)
        except Exception as e:  # noqa: BLE001 - every failure is ork's error answer
            _log.exception("reconcile %s", req.get("key"))
            return error(e)
        if not isinstance(res, dict):
            return error(f"the reconciler answered {type(res).__name__}, not a Result")
        return res

    def _authorize(self, headers: Mapping[str, str]) -> Response | None:
        if self.no_auth:
            return None
        assert self.token_file is not None
        try:
            with open(self.token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as e:
            _log.error("token file: %s", e)
            return _text(500, "Internal Server Error")
        if not token:
            _log.error("token file %s is empty", self.token_file)
            return _text(500, "Internal Server Error")
        want = "Bearer " + token if self.auth_header.lower() == "authorization" else token
        got = headers.get(self.auth_header.lower(), "")
        if not hmac.compare_digest(got.encode(), want.encode()):
            return _text(401, "Unauthorized")
        return None

    def wsgi(
        self, environ: dict[str, Any], start_response: Callable[[str, list[tuple[str, str]]], Any]
    ) -> Iterable[bytes]:
        """The handler as a WSGI application."""
        headers = {k[5:].replace("_", "-"): str(v) for k, v in environ.items() if k.startswith("HTTP_")}
        if environ.get("CONTENT_TYPE"):
            headers["Content-Type"] = str(environ["CONTENT_TYPE"])
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > self.max_body_bytes:
            res = _text(413, f"request body over {self.max_body_bytes} bytes")
        else:
            body = environ["wsgi.input"].read(length) if length > 0 else b""
            res = self.handle(str(environ.get("REQUEST_METHOD", "GET")), str(environ.get("PATH_INFO", "/")), headers, body)
        start_response(f"{res.status} {_reason(res.status)}", list(res.headers.items()))
        return [res.body]


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class _InFlight:
    """Counts the requests being answered, so that a shutdown waits for them (and not for
    idle keep-alive connections)."""

    def __init__(self) -> None:
        self._n = 0
        self._cond = threading.Condition()

    def __enter__(self) -> None:
        with self._cond:
            self._n += 1

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._n -= 1
            self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._n == 0, timeout=timeout)


def _request_handler(handler: Handler, in_flight: _InFlight) -> type[BaseHTTPRequestHandler]:
    class RequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            with in_flight:
                self._answer()

        def _answer(self) -> None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = 0
            if length > handler.max_body_bytes:
                res = _text(413, f"request body over {handler.max_body_bytes} bytes")
                self.close_connection = True
            else:
                body = self.rfile.read(length) if length > 0 else b""
                path = self.path.split("?", 1)[0]
                res = handler.handle(self.command, path, dict(self.headers.items()), body)
            self.send_response(res.status)
            for k, v in res.headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(res.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(res.body)

        do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            _log.debug(format, *args)

    return RequestHandler


def serve(handler: Handler, addr: str = ":8088", *, grace: float = 8.0) -> None:
    """Serve handler on addr ("host:port"; ":8088" is every interface) until SIGTERM or
    SIGINT, then stop accepting and let in-flight reconciles finish for up to grace
    seconds. Call it from the main thread."""
    host, _, port = addr.rpartition(":")
    in_flight = _InFlight()
    server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), _request_handler(handler, in_flight))
    server.daemon_threads = True  # idle keep-alive connections do not hold the exit

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        if not in_flight.wait_idle(grace):
            _log.warning("reconciles still in flight after %ss: exiting", grace)
