"""The answers a reconciler gives ork: ok, requeue, pending and error."""

from __future__ import annotations

from typing import Any, Sequence

from ._wire import PendingOperation, PreparedRequest, Resource, Result


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


def pending(
    operation_id: str,
    poll_after: float | None = None,
    *,
    deadline: float | None = None,
    progress: int | None = None,
    message: str | None = None,
    status: dict[str, Any] | None = None,
    resources: Sequence[Resource] | None = None,
) -> Result:
    """A long-running operation was started, or goes on: ork applies resources and status,
    holds the operation on the custom resource (Ready False, reason OperationPending) and
    calls again after poll_after seconds (None: ork's default, 10 s; under 1 s counts as 1 s)
    with prepared.operation, until a final answer (ok or requeue). The id of
    prepared.operation continues it; another id replaces it. deadline (seconds from the
    operation's start) bounds it; progress is a percentage, 0 to 100."""
    if not operation_id:
        raise ValueError("an operation has an id")
    if progress is not None and not 0 <= progress <= 100:
        raise ValueError(f"progress is from 0 to 100, not {progress}")
    op: PendingOperation = {"id": operation_id}
    if poll_after is not None:
        op["pollAfter"] = go_duration(poll_after)
    if deadline is not None:
        op["deadline"] = go_duration(deadline)
    if progress is not None:
        op["progress"] = progress
    if message is not None:
        op["message"] = message
    res = ok(status=status, resources=resources)
    res["result"] = "pending"
    res["operation"] = op
    return res


def operation_key(req: PreparedRequest) -> str:
    """The stable key of the work a request asks for: prepared.operation.key while ork holds
    an operation for the request's generation, else "<metadata.uid>/<prepared.generation>" (no
    operation, or a superseded one). Key the external work you start on it: when ork asks
    again for the same generation without prepared.operation (it crashed before persisting
    your pending answer), answer pending with the operation you already started, not a second
    one."""
    held = req["prepared"].get("operation")
    if held is not None and not held["superseded"]:
        return held["key"]
    uid = req["object"].get("metadata", {}).get("uid", "")
    return f"{uid}/{req['prepared']['generation']}"


def error(message: str | BaseException) -> Result:
    """A failed reconcile: ork applies nothing, shows message in the Ready condition and
    retries with backoff."""
    return {"result": "error", "error": str(message) or type(message).__name__}
