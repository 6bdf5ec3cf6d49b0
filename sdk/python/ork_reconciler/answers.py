"""The answers a reconciler gives ork: ok, requeue and error."""

from __future__ import annotations

from typing import Any, Sequence

from ._wire import Resource, Result


def go_duration(seconds: float) -> str:
    """A duration as ork reads it (a Go duration): 30 -> "30s", 0.5 -> "500ms"."""
    if seconds < 0:
        raise ValueError(f"a duration is not negative: {seconds}")
    if float(seconds).is_integer():
        return f"{int(seconds)}s"
    return f"{round(seconds * 1000)}ms"


def ok(
    *,
    status: dict[str, Any] | None = None,
    resources: Sequence[Resource] | None = None,
    requeue_after: float | None = None,
) -> Result:
    """A successful answer: ork applies resources and merges status. resources=None is "no
    opinion"; [] says "no objects" (with reconcile.remote.prune every child is pruned).
    requeue_after (seconds) asks for another reconcile later."""
    res: Result = {"result": "ok"}
    if status is not None:
        res["status"] = status
    if resources is not None:
        res["resources"] = list(resources)
    if requeue_after is not None:
        res["requeueAfter"] = go_duration(requeue_after)
    return res


def requeue(
    after: float | None = None,
    *,
    status: dict[str, Any] | None = None,
    resources: Sequence[Resource] | None = None,
) -> Result:
    """A successful answer that asks ork to reconcile again after `after` seconds (None:
    after ork's per-key backoff)."""
    res = ok(status=status, resources=resources)
    res["result"] = "requeue"
    if after:
        res["requeueAfter"] = go_duration(after)
    return res


def error(message: str | BaseException) -> Result:
    """A failed reconcile: ork applies nothing, shows message in the Ready condition and
    retries with backoff."""
    return {"result": "error", "error": str(message) or type(message).__name__}
