"""`xpeval local-model serve|stop|status|install`: local llama-servers, one per model, on loopback."""

from __future__ import annotations

import argparse
import json
from typing import Any

SUMMARY = "run local model servers (llama.cpp + small Qwen2.5-Coder models) on loopback"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("local-model", help=SUMMARY)
    actions = parser.add_subparsers(dest="local_model_action", metavar="ACTION", required=True)

    serve = actions.add_parser("serve", help="start a model's server and wait until it is ready")
    _model_option(serve)
    serve.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for readiness")
    serve.set_defaults(handler=run_serve)

    stop = actions.add_parser("stop", help="stop a server this tool started (by its PID)")
    _model_option(stop)
    stop.set_defaults(handler=run_stop)

    status = actions.add_parser(
        "status", help="say whether a model's server runs (exit 0 running, 3 not; with all: all of them)"
    )
    _model_option(status)
    status.add_argument("--json", action="store_true", help="print each status as one line of JSON")
    status.set_defaults(handler=run_status)

    install = actions.add_parser("install", help="install the local-model extra with its build settings")
    install.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    install.add_argument(
        "--portable",
        action="store_true",
        help="build a binary that runs on other CPUs too (-DGGML_NATIVE=OFF)",
    )
    install.set_defaults(handler=run_install)


def _model_option(parser: argparse.ArgumentParser) -> None:
    from xpeval.evals.local_model.models import DEFAULT_MODEL, SERVED, aliases

    ports = ", ".join(f"{model.alias} on {model.port}" for model in SERVED)
    parser.add_argument(
        "--model",
        choices=[*aliases(), "all"],
        default=DEFAULT_MODEL.alias,
        metavar="ALIAS|all",
        help=f"which model's server ({ports}; default {DEFAULT_MODEL.alias}), or all of them",
    )


def _servers(args: argparse.Namespace) -> list[Any]:
    from xpeval.evals.local_model import LocalModelServer
    from xpeval.evals.local_model.models import select

    return [LocalModelServer(model) for model in select(args.model)]


def run_serve(args: argparse.Namespace) -> int:
    for server in _servers(args):
        status = server.serve(timeout=args.timeout)
        took = f" (ready in {status.startup_seconds:.1f} s)" if status.startup_seconds is not None else ""
        print(status.line() + took, flush=True)
    return 0


def run_stop(args: argparse.Namespace) -> int:
    from xpeval.evals.local_model import LocalModelError

    refused: list[str] = []
    for server in _servers(args):
        # One refusal (a port held by another process) must not leave the other servers running.
        try:
            print(server.stop().line(), flush=True)
        except LocalModelError as exc:
            refused.append(str(exc))
    if refused:
        raise LocalModelError("; ".join(refused))
    return 0


def run_status(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    statuses = [server.status() for server in _servers(args)]
    for status in statuses:
        if args.json:
            print(json.dumps({**asdict(status), "base_url": status.base_url}))
        else:
            print(status.line())
    return 0 if all(status.state == "running" for status in statuses) else 3


def run_install(args: argparse.Namespace) -> int:
    from xpeval.evals.local_model.install import install

    return install(portable=args.portable, dry_run=args.dry_run)
