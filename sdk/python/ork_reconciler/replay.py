"""Replay what ork recorded (``ork run --record``) against a Handler and compare the
answers as ``ork rollout diff`` does."""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from typing import Any

from .handler import CONTRACT_VERSION_HEADER, Handler

EXCHANGE_VERSION = "ork.exchange/v1"
MAX_PATHS = 50

_KINDS = {
    "configmap": ("v1", "ConfigMap"),
    "cronjob": ("batch/v1", "CronJob"),
    "daemonset": ("apps/v1", "DaemonSet"),
    "deployment": ("apps/v1", "Deployment"),
    "ingress": ("networking.k8s.io/v1", "Ingress"),
    "job": ("batch/v1", "Job"),
    "persistentvolumeclaim": ("v1", "PersistentVolumeClaim"),
    "secret": ("v1", "Secret"),
    "service": ("v1", "Service"),
    "serviceaccount": ("v1", "ServiceAccount"),
    "statefulset": ("apps/v1", "StatefulSet"),
}
_IGNORED_METADATA = ("managedFields", "resourceVersion", "uid", "generation", "creationTimestamp")


@dataclass
class Exchange:
    """One recorded call, as read from one file of a recording."""

    file: str
    key: str
    trigger: str
    request: dict[str, Any]
    status_code: int
    response: Any


@dataclass
class ReplayResult:
    """One recorded exchange sent again: the handler's status, whether both answers were a
    200 to compare, and the differing field paths."""

    file: str
    key: str
    trigger: str
    status: int
    compared: bool = False
    divergences: list[str] = field(default_factory=list)


def load(directory: str) -> list[Exchange]:
    """Every *.json file of directory, in name order (the order ork recorded them in)."""
    names = sorted(glob.glob(os.path.join(directory, "*.json")))
    if not names:
        raise ValueError(f"replay {directory}: no recorded exchange (*.json)")
    out = []
    for name in names:
        with open(name, encoding="utf-8") as f:
            e = json.load(f)
        if e.get("version") != EXCHANGE_VERSION:
            raise ValueError(f"replay {name}: version {e.get('version')!r}, want {EXCHANGE_VERSION!r}")
        out.append(
            Exchange(
                file=os.path.basename(name),
                key=e.get("key", ""),
                trigger=e.get("trigger", ""),
                request=e["request"],
                status_code=int(e.get("statusCode", 0)),
                response=e.get("response"),
            )
        )
    return out


def replay(
    handler: Handler, directory: str, *, token: str | None = None, include_delete: bool = False
) -> list[ReplayResult]:
    """Send each recorded request to handler as a dry run (prepared.dryRun: true, as ork
    rollout diff does) and compare its answer with the recorded one. Recorded deletes are
    left out unless include_delete."""
    results = []
    for x in load(directory):
        req = json.loads(json.dumps(x.request))
        req["prepared"]["dryRun"] = True
        md = (req.get("object") or {}).get("metadata") or {}
        if not include_delete and (req["prepared"].get("trigger") == "delete" or md.get("deletionTimestamp")):
            continue
        headers = {"Content-Type": "application/json", CONTRACT_VERSION_HEADER: "1"}
        if token is not None:
            auth = handler.auth_header
            headers[auth] = "Bearer " + token if auth.lower() == "authorization" else token
        res = handler.handle("POST", handler.path, headers, json.dumps(req).encode())
        r = ReplayResult(file=x.file, key=x.key, trigger=x.trigger, status=res.status)
        if res.status == 200 and x.status_code == 200 and x.response is not None:
            r.compared = True
            r.divergences = diff(x.response, json.loads(res.body), md.get("namespace", ""))
        results.append(r)
    return results


def diff(recorded: Any, answer: Any, namespace: str) -> list[str]:
    """The field paths where answer differs from recorded (two decoded results for a custom
    resource in namespace), sorted, as ork rollout diff names them: result, requeueAfter,
    status.<path>, objects[<apiVersion> <Kind> <ns>/<name>] and the path of a field under
    it. ork compares the objects its planner builds; this compares the answers' entries, so
    under an intent the path names the field written (….fields.replicas). Numbers compare
    by value; a string that spells a number or a boolean equals it."""
    r, a = _normalise(recorded, namespace), _normalise(answer, namespace)
    paths: list[str] = []
    if r["result"] != a["result"]:
        paths.append("result")
    if r["requeueAfter"] != a["requeueAfter"]:
        paths.append("requeueAfter")
    _diff_value(paths, "status", r["status"], a["status"])
    ro, ao = r["objects"], a["objects"]
    for name in sorted(set(ro) | set(ao)):
        at = f"objects[{name}]"
        if name not in ro or name not in ao:
            paths.append(at)
        else:
            _diff_value(paths, at, ro[name], ao[name])
    paths.sort()
    if len(paths) > MAX_PATHS:
        more = len(paths) - MAX_PATHS
        paths = paths[:MAX_PATHS] + [f"… and {more} more"]
    return paths


def _normalise(res: Any, namespace: str) -> dict[str, Any]:
    res = res or {}
    objects: dict[str, Any] = {}
    for entry in res.get("resources") or []:
        name, obj = _identify(entry, namespace)
        objects[name] = obj
    return {
        "result": res.get("result") or "ok",
        "requeueAfter": _seconds(res.get("requeueAfter") or ""),
        "status": res.get("status") or None,
        "objects": objects,
    }


_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def _seconds(d: str) -> float:
    """A Go duration in seconds: "1m30s" -> 90."""
    total, num, i = 0.0, "", 0
    while i < len(d):
        c = d[i]
        if c.isdigit() or c == ".":
            num += c
            i += 1
            continue
        for unit in sorted(_UNITS, key=len, reverse=True):
            if d.startswith(unit, i):
                total += float(num or "0") * _UNITS[unit]
                num, i = "", i + len(unit)
                break
        else:
            raise ValueError(f"requeueAfter {d!r} is not a duration")
    if num and num != "0":
        raise ValueError(f"requeueAfter {d!r}: a number without a unit")
    return total


def _text(v: Any) -> str:
    return "" if v is None else str(v)


def _identify(entry: dict[str, Any], namespace: str) -> tuple[str, Any]:
    fields = entry.get("fields")
    if isinstance(fields, dict):
        typ = entry.get("type", "")
        if typ == "custom":
            gk = (_text(fields.get("apiVersion")), _text(fields.get("kind")))
        elif typ in _KINDS:
            gk = _KINDS[typ]
        else:
            raise ValueError(f"unknown intent type {typ!r}")
        ns = _text(fields.get("namespace")) or namespace
        obj: dict[str, Any] = {"fields": fields}
        if entry.get("forceConflict") is not None:
            obj["forceConflict"] = entry["forceConflict"]
        return f"{gk[0]} {gk[1]} {ns}/{_text(fields.get('name'))}", obj
    md = dict(entry.get("metadata") or {})
    ns = _text(md.get("namespace")) or namespace
    name = f"{_text(entry.get('apiVersion'))} {_text(entry.get('kind'))} {ns}/{_text(md.get('name'))}"
    for k in _IGNORED_METADATA:
        md.pop(k, None)
    return name, {**entry, "metadata": md}


def _diff_value(paths: list[str], at: str, a: Any, b: Any) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            _diff_value(paths, at + "." + k.replace(".", "\\."), a.get(k), b.get(k))
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff_value(paths, f"{at}[{i}]", x, y)
        return
    if not _equal_scalar(a, b):
        paths.append(at)


def _equal_scalar(a: Any, b: Any) -> bool:
    if type(a) is type(b) or (_is_number(a) and _is_number(b)):
        if a == b:
            return True
    ta, tb = _scalar_text(a), _scalar_text(b)
    return ta is not None and ta == tb


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _scalar_text(v: Any) -> str | None:
    """The canonical text of a number, a boolean, or a string that spells one."""
    if isinstance(v, bool):
        return str(v).lower()
    if _is_number(v):
        return repr(float(v))
    if isinstance(v, str):
        s = v.strip()
        try:
            return repr(float(s))
        except ValueError:
            pass
        if s in ("1", "t", "T", "TRUE", "true", "True"):
            return "true"
        if s in ("0", "f", "F", "FALSE", "false", "False"):
            return "false"
    return None
