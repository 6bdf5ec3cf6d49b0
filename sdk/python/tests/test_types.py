import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

GOOD = """
import ork_reconciler as ork

def reconcile(req: ork.PreparedRequest) -> ork.Result:
    return ork.ok(resources=[ork.deployment(name="web", image="nginx", replicas=2)])
"""


@unittest.skipIf(shutil.which("mypy") is None, "mypy is not on PATH")
class TypesTest(unittest.TestCase):
    """mypy --strict catches what ork would reject at run time, naming the field."""

    cache: tempfile.TemporaryDirectory[str]

    @classmethod
    def setUpClass(cls) -> None:
        # One cache for the cases: the SDK and typeshed are checked once.
        cls.cache = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.cache.cleanup()

    def check(self, source: str) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "user.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(source)
            return subprocess.run(
                ["mypy", "--strict", "--cache-dir", self.cache.name, path],
                cwd=ROOT,
                env={**os.environ, "MYPYPATH": ROOT},
                capture_output=True,
                text=True,
            )

    def test_mistakes_fail_mypy_naming_the_field(self) -> None:
        cases = [
            ("typed", GOOD, None),
            ("misspelled field", GOOD.replace("image=", "imagee="), '"imagee"'),
            ("number as text", GOOD.replace("replicas=2", 'replicas="2"'), '"replicas"'),
            ("missing required field", GOOD.replace(', image="nginx"', ""), '"image"'),
            ("unknown result", GOOD.replace("return ork.ok(", 'return {"result": "done"} or ork.ok('), "result"),
            ("unknown request key", GOOD.replace("return", 'req["objekt"]\n    return'), '"objekt"'),
        ]
        for name, source, want in cases:
            with self.subTest(name):
                res = self.check(source)
                if want is None:
                    self.assertEqual(res.returncode, 0, res.stdout)
                else:
                    self.assertNotEqual(res.returncode, 0, f"mypy passed:\n{source}")
                    self.assertIn(want, res.stdout)


if __name__ == "__main__":
    unittest.main()
