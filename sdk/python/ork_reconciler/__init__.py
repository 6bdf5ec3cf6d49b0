"""Typed SDK for ork's remote reconcilers.

The request and answer types are generated from ork's schema/*.json (``_wire``); the
builders (``deployment(...)``, ``service(...)``) make intent entries, ``ok``/``requeue``/
``pending``/``error`` make answers, ``Handler`` turns a reconcile function into ork's wire format
(bearer token checked in constant time, body limited, ``/healthz``) for WSGI or the
standard library's HTTP server (``serve``). Standard library only.
"""

from ._wire import *  # noqa: F401,F403  (the generated types and builders)
from ._wire import CONTRACT_VERSION, PreparedRequest, Resource, Result
from .answers import error, go_duration, ok, operation_key, pending, requeue
from .handler import CONTRACT_VERSION_HEADER, Handler, Reconcile, Response, serve
from .replay import Exchange, ReplayResult, diff, load, replay

__all__ = [
    "CONTRACT_VERSION",
    "CONTRACT_VERSION_HEADER",
    "Exchange",
    "Handler",
    "PreparedRequest",
    "Reconcile",
    "ReplayResult",
    "Resource",
    "Response",
    "Result",
    "diff",
    "error",
    "go_duration",
    "load",
    "ok",
    "operation_key",
    "pending",
    "replay",
    "requeue",
    "serve",
]
