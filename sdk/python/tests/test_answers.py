import json
import unittest

import ork_reconciler as ork


class AnswersTest(unittest.TestCase):
    def test_answers_encode_as_ork_reads_them(self) -> None:
        cases = [
            ("ok", ork.ok(), {"result": "ok"}),
            ("requeue after", ork.requeue(30), {"result": "requeue", "requeueAfter": "30s"}),
            ("requeue with backoff", ork.requeue(), {"result": "requeue"}),
            ("requeue in ms", ork.requeue(0.5), {"result": "requeue", "requeueAfter": "500ms"}),
            ("error", ork.error("spec.image is required"), {"result": "error", "error": "spec.image is required"}),
            ("error of an exception", ork.error(ValueError("bad")), {"result": "error", "error": "bad"}),
            ("empty resources prunes", ork.ok(resources=[]), {"result": "ok", "resources": []}),
            ("ok and again later", ork.ok(requeue_after=60), {"result": "ok", "requeueAfter": "60s"}),
            (
                "zero replicas is said",
                ork.ok(resources=[ork.deployment(name="w", image="i", replicas=0)]),
                {"result": "ok", "resources": [{"type": "deployment", "fields": {"name": "w", "image": "i", "replicas": 0}}]},
            ),
            (
                "port by name and force",
                ork.ok(resources=[ork.service(name="s", port=80, target_port="http", force_conflict=False)]),
                {
                    "result": "ok",
                    "resources": [
                        {"type": "service", "fields": {"name": "s", "port": 80, "targetPort": "http"}, "forceConflict": False}
                    ],
                },
            ),
            (
                "custom and a full object",
                ork.ok(
                    resources=[
                        ork.custom(api_version="x.io/v1", kind="DB", name="d", spec={"size": 1}),
                        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
                    ]
                ),
                {
                    "result": "ok",
                    "resources": [
                        {"type": "custom", "fields": {"apiVersion": "x.io/v1", "kind": "DB", "name": "d", "spec": {"size": 1}}},
                        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
                    ],
                },
            ),
        ]
        for name, got, want in cases:
            with self.subTest(name):
                self.assertEqual(json.loads(json.dumps(got)), want)

    def test_pending(self) -> None:
        cases: list[tuple[str, ork.Result, dict[str, object]]] = [
            ("at ork's pace", ork.pending("db-1"), {"result": "pending", "operation": {"id": "db-1"}}),
            ("poll after", ork.pending("db-1", 30), {"result": "pending", "operation": {"id": "db-1", "pollAfter": "30s"}}),
            (
                "every field",
                ork.pending("db-1", 10, deadline=1800, progress=0, message="creating", status={"phase": "Provisioning"}),
                {
                    "result": "pending",
                    "status": {"phase": "Provisioning"},
                    "operation": {"id": "db-1", "pollAfter": "10s", "deadline": "1800s", "progress": 0, "message": "creating"},
                },
            ),
        ]
        for name, got, want in cases:
            with self.subTest(name):
                self.assertEqual(json.loads(json.dumps(got)), want)
        with self.assertRaises(ValueError):
            ork.pending("")
        with self.assertRaises(ValueError):
            ork.pending("db-1", progress=101)

    def test_operation_key(self) -> None:
        req: ork.PreparedRequest = {
            "key": "default/w",
            "gvk": {"Group": "g", "Version": "v1", "Kind": "K"},
            "object": {"metadata": {"uid": "0b5e-uid"}},
            "args": {},
            "prepared": {"trigger": "create", "attempt": 1, "generation": 3, "deleting": False},
        }
        self.assertEqual(ork.operation_key(req), "0b5e-uid/3")
        req["prepared"]["operation"] = {
            "id": "db-1",
            "key": "0b5e-uid/2/db-1",
            "startedAt": "2026-05-01T12:00:00Z",
            "polls": 0,
            "superseded": False,
            "timedOut": False,
            "generation": 3,
        }
        self.assertEqual(ork.operation_key(req), "0b5e-uid/2/db-1")
        req["prepared"]["operation"]["superseded"] = True
        self.assertEqual(ork.operation_key(req), "0b5e-uid/3")

    def test_negative_duration_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            ork.requeue(-1)

    def test_every_intent_type_has_a_builder(self) -> None:
        names = {
            "configmap": "config_map",
            "cronjob": "cron_job",
            "daemonset": "daemon_set",
            "persistentvolumeclaim": "persistent_volume_claim",
            "serviceaccount": "service_account",
            "statefulset": "stateful_set",
        }
        for typ in ork.IntentType.__args__:  # type: ignore[attr-defined]
            with self.subTest(typ):
                self.assertTrue(callable(getattr(ork, names.get(typ, typ))))


if __name__ == "__main__":
    unittest.main()
