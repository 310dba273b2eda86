"""`xpeval local-model serve|stop|status|install`: the local llama-server on 127.0.0.1:18181."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "local-model", help="run the local model server (llama.cpp + Qwen2.5-Coder-1.5B) on loopback"
    )
    actions = parser.add_subparsers(dest="local_model_action", metavar="ACTION", required=True)

    serve = actions.add_parser("serve", help="start the server and wait until it is ready")
    serve.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for readiness")
    serve.set_defaults(handler=run_serve)

    stop = actions.add_parser("stop", help="stop the server this tool started (by its PID)")
    stop.set_defaults(handler=run_stop)

    status = actions.add_parser("status", help="say whether the server runs (exit 0 running, 3 not)")
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    status.set_defaults(handler=run_status)

    install = actions.add_parser("install", help="install the local-model extra with its build settings")
    install.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    install.add_argument(
        "--portable",
        action="store_true",
        help="build a binary that runs on other CPUs too (-DGGML_NATIVE=OFF)",
    )
    install.set_defaults(handler=run_install)


def run_serve(args: argparse.Namespace) -> int:
    from evals.local_model import LocalModelServer

    status = LocalModelServer().serve(timeout=args.timeout)
    took = f" (ready in {status.startup_seconds:.1f} s)" if status.startup_seconds is not None else ""
    print(status.line() + took)
    return 0


def run_stop(args: argparse.Namespace) -> int:
    from evals.local_model import LocalModelServer

    print(LocalModelServer().stop().line())
    return 0


def run_status(args: argparse.Namespace) -> int:
    from evals.local_model import LocalModelServer

    status = LocalModelServer().status()
    if args.json:
        print(json.dumps({**asdict(status), "base_url": status.base_url}))
    else:
        print(status.line())
    return 0 if status.state == "running" else 3


def run_install(args: argparse.Namespace) -> int:
    from evals.local_model.install import install

    return install(portable=args.portable, dry_run=args.dry_run)
