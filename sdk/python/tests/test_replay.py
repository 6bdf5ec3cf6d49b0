import os
import sys
import unittest
from typing import Any

import ork_reconciler as ork

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDING = os.path.join(HERE, "testdata", "recording")
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import webapp  # noqa: E402


def handler(reconcile: ork.Reconcile) -> ork.Handler:
    return ork.Handler(reconcile, no_auth=True)


class DiffTest(unittest.TestCase):
    def test_diff_names_the_differing_fields(self) -> None:
        dep = {"type": "deployment", "fields": {"name": "web", "image": "nginx", "replicas": 2}}
        cases: list[tuple[str, Any, Any, list[str]]] = [
            ("same", {"result": "ok", "resources": [dep]}, {"resources": [dep]}, []),
            ("result", {"result": "ok"}, {"result": "requeue"}, ["result"]),
            ("requeueAfter by value", {"requeueAfter": "60s"}, {"requeueAfter": "1m"}, []),
            ("requeueAfter", {"requeueAfter": "1m30s"}, {}, ["requeueAfter"]),
            ("empty status is none", {"status": {}}, {"status": None}, []),
            ("status field", {"status": {"phase": "Ready", "n": 1}}, {"status": {"phase": "Pending", "n": 1.0}}, ["status.phase"]),
            ("dotted key", {"status": {"a.b": 1}}, {"status": {"a.b": 2}}, ["status.a\\.b"]),
            ("list lengths", {"status": {"l": [1, 2]}}, {"status": {"l": [1]}}, ["status.l"]),
            ("list element", {"status": {"l": [1, 2]}}, {"status": {"l": [1, 3]}}, ["status.l[1]"]),
            (
                "intent field",
                {"resources": [dep]},
                {"resources": [{"type": "deployment", "fields": {"name": "web", "image": "nginx", "replicas": 3}}]},
                ["objects[apps/v1 Deployment default/web].fields.replicas"],
            ),
            (
                "a string spelling the number",
                {"resources": [dep]},
                {"resources": [{"type": "deployment", "fields": {"name": "web", "image": "nginx", "replicas": "2"}}]},
                [],
            ),
            ("object on one side", {"resources": [dep]}, {"resources": []}, ["objects[apps/v1 Deployment default/web]"]),
            (
                "full object, server fields ignored",
                {"resources": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "uid": "1"}, "data": {"a": "1"}}]},
                {"resources": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "2"}}]},
                ["objects[v1 ConfigMap default/c].data.a"],
            ),
        ]
        for name, recorded, answer, want in cases:
            with self.subTest(name):
                self.assertEqual(ork.diff(recorded, answer, "default"), want)

    def test_diff_is_bounded(self) -> None:
        a = {"status": {f"k{i:02d}": 1 for i in range(60)}}
        b = {"status": {f"k{i:02d}": 2 for i in range(60)}}
        got = ork.diff(a, b, "")
        self.assertEqual(len(got), 51)
        self.assertEqual(got[-1], "… and 10 more")


class ReplayTest(unittest.TestCase):
    def test_replay_of_the_recording_passes(self) -> None:
        results = ork.replay(handler(webapp.reconcile), RECORDING)
        self.assertTrue(results)
        for r in results:
            self.assertTrue(r.compared, r)
            self.assertEqual(r.divergences, [], r.file)

    def test_replay_sends_the_token_and_dry_run(self) -> None:
        seen: list[bool] = []

        def spy(req: ork.PreparedRequest) -> ork.Result:
            seen.append(req["prepared"].get("dryRun", False))
            return webapp.reconcile(req)

        h = ork.Handler(spy, token_file=os.path.join(HERE, "testdata", "token"))
        self.assertEqual({r.status for r in ork.replay(h, RECORDING, token="t0ken")}, {200})
        self.assertEqual({r.status for r in ork.replay(h, RECORDING, token="wrong")}, {401})
        self.assertTrue(seen and all(seen))

    def test_a_changed_logic_fails_naming_the_field(self) -> None:
        def more_replicas(req: ork.PreparedRequest) -> ork.Result:
            res = webapp.reconcile(req)
            res["resources"][0]["fields"]["replicas"] += 1
            return res

        for r in ork.replay(handler(more_replicas), RECORDING):
            self.assertEqual(r.divergences, ["objects[apps/v1 Deployment default/my-webapp].fields.replicas"], r.file)


if __name__ == "__main__":
    unittest.main()
