import contextlib
import io
import json
import os
import tempfile
import unittest
from typing import Any

import ork_reconciler as ork

REQUEST = {
    "key": "default/web",
    "gvk": {"Group": "myorg.io", "Version": "v1", "Kind": "WebApp"},
    "object": {"apiVersion": "myorg.io/v1", "kind": "WebApp", "metadata": {"name": "web", "namespace": "default"}},
    "args": {},
    "prepared": {"trigger": "create", "attempt": 1, "generation": 1, "deleting": False},
}
BODY = json.dumps(REQUEST).encode()


def ok_status(req: ork.PreparedRequest) -> ork.Result:
    return ork.ok(status={"name": req["object"]["metadata"]["name"]})


def boom(req: ork.PreparedRequest) -> ork.Result:
    raise RuntimeError("database down")


def not_a_result(req: ork.PreparedRequest) -> Any:
    return "ok"


class TokenFile:
    def __init__(self, token: str) -> None:
        fd, self.path = tempfile.mkstemp()
        os.close(fd)
        self.write(token)

    def write(self, token: str) -> None:
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(token + "\n")


class HandlerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.token = TokenFile("s3cret")
        self.addCleanup(self._remove_token)

    def _remove_token(self) -> None:
        if os.path.exists(self.token.path):
            os.remove(self.token.path)

    def test_token_is_checked(self) -> None:
        cases: list[tuple[str, str, dict[str, str], int]] = [
            ("bearer token", "Authorization", {"Authorization": "Bearer s3cret"}, 200),
            ("header name in any case", "Authorization", {"authorization": "Bearer s3cret"}, 200),
            ("no header", "Authorization", {}, 401),
            ("wrong token", "Authorization", {"Authorization": "Bearer wrong"}, 401),
            ("without Bearer", "Authorization", {"Authorization": "s3cret"}, 401),
            ("custom header, bare token", "X-Token", {"X-Token": "s3cret"}, 200),
            ("custom header with Bearer", "X-Token", {"X-Token": "Bearer s3cret"}, 401),
        ]
        for name, auth_header, headers, want in cases:
            with self.subTest(name):
                h = ork.Handler(ok_status, token_file=self.token.path, auth_header=auth_header)
                self.assertEqual(h.handle("POST", "/reconcile", headers, BODY).status, want)

    def test_rotated_token_is_used_without_restart(self) -> None:
        h = ork.Handler(ok_status, token_file=self.token.path)
        self.assertEqual(h.handle("POST", "/reconcile", {"Authorization": "Bearer s3cret"}, BODY).status, 200)
        self.token.write("new")
        self.assertEqual(h.handle("POST", "/reconcile", {"Authorization": "Bearer s3cret"}, BODY).status, 401)
        self.assertEqual(h.handle("POST", "/reconcile", {"Authorization": "Bearer new"}, BODY).status, 200)
        os.remove(self.token.path)
        with self.assertLogs("ork_reconciler", level="ERROR"):
            self.assertEqual(h.handle("POST", "/reconcile", {"Authorization": "Bearer new"}, BODY).status, 500)

    def test_token_file_or_no_auth_is_required(self) -> None:
        with self.assertRaises(ValueError):
            ork.Handler(ok_status)

    def test_answers(self) -> None:
        cases: list[tuple[str, ork.Reconcile, str, str, bytes, int, Any]] = [
            ("ok with status", ok_status, "POST", "/reconcile", BODY, 200, {"result": "ok", "status": {"name": "web"}}),
            ("health", ok_status, "GET", "/healthz", b"", 200, "ok"),
            ("GET of the reconcile path", ok_status, "GET", "/reconcile", b"", 405, None),
            ("unknown path", ok_status, "POST", "/other", BODY, 404, None),
            ("no JSON", ok_status, "POST", "/reconcile", b"{", 400, "not a PreparedRequest"),
            ("no prepared", ok_status, "POST", "/reconcile", b"{}", 400, "no prepared"),
            ("over the limit", ok_status, "POST", "/reconcile", b" " * 101 + BODY, 413, "over"),
            ("exception", boom, "POST", "/reconcile", BODY, 200, {"result": "error", "error": "database down"}),
            ("no Result", not_a_result, "POST", "/reconcile", BODY, 200, {"result": "error", "error": "the reconciler answered str, not a Result"}),
        ]
        for name, fn, method, path, body, want_status, want in cases:
            with self.subTest(name):
                h = ork.Handler(fn, no_auth=True, max_body_bytes=len(BODY) + 100)
                with contextlib.ExitStack() as stack:
                    if fn is boom:
                        stack.enter_context(self.assertLogs("ork_reconciler", level="ERROR"))
                    res = h.handle(method, path, {}, body)
                self.assertEqual(res.status, want_status, res.body)
                if isinstance(want, dict):
                    self.assertEqual(json.loads(res.body), want)
                    self.assertEqual(res.headers["Ork-Contract-Version"], ork.CONTRACT_VERSION)
                    self.assertEqual(res.headers["Content-Type"], "application/json")
                elif want is not None:
                    self.assertIn(want, res.body.decode())

    def test_another_major_contract_version_is_told(self) -> None:
        for header, want in [("", None), ("1", None), ("1.4", None), ("2", "2"), ("2.1", "2.1")]:
            with self.subTest(header):
                seen: list[str] = []
                h = ork.Handler(ok_status, no_auth=True, on_contract_mismatch=seen.append)
                res = h.handle("POST", "/reconcile", {"Ork-Contract-Version": header} if header else {}, BODY)
                self.assertEqual(res.status, 200)
                self.assertEqual(seen, [want] if want else [])

    def test_wsgi(self) -> None:
        h = ork.Handler(ok_status, token_file=self.token.path, max_body_bytes=len(BODY))
        cases: list[tuple[str, dict[str, str], bytes, str]] = [
            ("ok", {"HTTP_AUTHORIZATION": "Bearer s3cret"}, BODY, "200 OK"),
            ("no token", {}, BODY, "401 Unauthorized"),
            ("too big", {"HTTP_AUTHORIZATION": "Bearer s3cret"}, BODY + b" ", "413 Request Entity Too Large"),
        ]
        for name, extra, body, want in cases:
            with self.subTest(name):
                started: list[str] = []
                environ = {
                    "REQUEST_METHOD": "POST",
                    "PATH_INFO": "/reconcile",
                    "CONTENT_LENGTH": str(len(body)),
                    "CONTENT_TYPE": "application/json",
                    "wsgi.input": io.BytesIO(body),
                    **extra,
                }
                out = b"".join(h.wsgi(environ, lambda status, headers: started.append(status)))
                self.assertEqual(started, [want], out)


if __name__ == "__main__":
    unittest.main()
