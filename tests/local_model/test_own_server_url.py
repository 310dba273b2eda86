"""`--target local-model --local-model-url URL`: the team's own OpenAI-compatible server (Ollama,
vLLM, llama-server) as the offline target: requests sent as-is, rows labelled `local-model` with
the served model's name, its recordings replayed offline; a server that cannot be reached, a
model it does not list, a URL that could not be replayed and a wire it does not speak are one
line each (issue 36, point 10)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests._cli import Cli
from tests._shop import shop_project

SERVED = "qwen2.5:0.5b"


class _OpenAICompatible(BaseHTTPRequestHandler):
    """GET /v1/models and POST /v1/chat/completions as Ollama answers them; every request body kept."""

    bodies: list[dict[str, Any]]

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self._send(404, {"error": "not found"})
            return
        self._send(
            200, {"object": "list", "data": [{"id": SERVED, "object": "model", "owned_by": "library"}]}
        )

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).bodies.append(body)
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": "not found"})
            return
        wants_order = "order" in json.dumps(body["messages"])
        message: dict[str, Any] = {"role": "assistant", "content": "Why did the chicken cross the road?"}
        if wants_order:
            call = {"name": "lookup_order", "arguments": json.dumps({"order": "A1234"})}
            message = {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "call_1", "type": "function", "function": call}],
            }
        self._send(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1765000000,
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": message, "finish_reason": "tool_calls" if wants_order else "stop"}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    def _send(self, status: int, document: dict[str, Any]) -> None:
        raw = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def own_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An OpenAI-compatible server on loopback: its /v1 URL and the request bodies it received."""
    bodies: list[dict[str, Any]] = []
    handler = type("Handler", (_OpenAICompatible,), {"bodies": bodies})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", bodies
    finally:
        server.shutdown()
        server.server_close()


def _rows(root: Path) -> list[dict[str, Any]]:
    lines = (root / "reports" / "results.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if "case_id" in r]


RUN = ("run", "--adapters", "openai-compatible", "--no-progress", "--no-baseline", "--stream", "never")


def test_a_recording_through_your_own_server_replays_offline_as_local_model(
    tmp_path: Path, cli: Cli, own_server: tuple[str, list[dict[str, Any]]]
) -> None:
    url, bodies = own_server
    root = shop_project(tmp_path, f'cases = "evals/cases"\nlocal_model_url = "{url}"\n')
    recorded = cli(*RUN, "--mode", "record", "--target", "local-model", "--models", SERVED, cwd=root)
    assert recorded.returncode == 0, recorded.stderr
    assert f"local model at your server {url} ({SERVED})" in recorded.stderr
    assert len(bodies) == 2 and {body["model"] for body in bodies} == {SERVED}
    # Sent as-is: the case's tools, not the bundled servers' shaping.
    assert all(body["tools"][0]["function"]["name"] == "lookup_order" for body in bodies)
    rows = _rows(root)
    assert {(r["source"], r["model"], r["correct"]) for r in rows} == {("local-model", SERVED, True)}
    cassettes = list((root / "cassettes" / "openai-compatible").rglob("*.yaml"))
    assert len(cassettes) == 2 and "source: local-model" in cassettes[0].read_text()

    (root / "reports" / "results.jsonl").unlink()
    (root / "pyproject.toml").write_text('[tool.xpeval]\ncases = "evals/cases"\n')  # no URL, no server
    replayed = cli(*RUN, cwd=root)
    assert replayed.returncode == 0, replayed.stderr
    assert len(bodies) == 2, "a replay never reaches the server"
    rows = _rows(root)
    assert len(rows) == 2
    assert {(r["source"], r["model"], r["correct"]) for r in rows} == {("local-model", SERVED, True)}


def test_your_own_server_is_checked_before_anything_is_sent(
    tmp_path: Path, cli: Cli, own_server: tuple[str, list[dict[str, Any]]]
) -> None:
    url, bodies = own_server
    root = shop_project(tmp_path, 'cases = "evals/cases"\n')
    record = (*RUN, "--mode", "record", "--target", "local-model")

    absent = cli(*record, "--local-model-url", url, "--models", "llama3:8b", cwd=root)
    assert absent.returncode == 2
    assert f"does not serve llama3:8b (it lists: {SERVED})" in absent.stderr

    no_url = cli(*record, "--models", SERVED, cwd=root)
    assert no_url.returncode == 2
    assert (
        f"no bundled server serves {SERVED}" in no_url.stderr
        and "pass --local-model-url URL" in no_url.stderr
    )

    unnamed = cli(*record, "--local-model-url", url, cwd=root)
    assert unnamed.returncode == 2 and "pass --models NAME" in unnamed.stderr

    down = cli(*record, "--local-model-url", "http://127.0.0.1:9/v1", "--models", SERVED, cwd=root)
    assert down.returncode == 2 and "no server answers GET http://127.0.0.1:9/v1/models" in down.stderr

    prefixed = cli(
        *record, "--local-model-url", url.replace("/v1", "/openai/v1"), "--models", SERVED, cwd=root
    )
    assert prefixed.returncode == 2 and "the URL must end in /v1" in prefixed.stderr

    other_wire = cli(
        "run", "--mode", "record", "--target", "local-model", "--adapters", "anthropic-messages",
        "--local-model-url", url, "--models", SERVED, "--no-progress", "--no-baseline", cwd=root,
    )  # fmt: skip
    assert other_wire.returncode == 2
    assert (
        "anthropic-messages cannot be sent to your server: only adapters of the openai-chat wire"
        in other_wire.stderr
    )
    assert bodies == [] and not (root / "cassettes").exists()


def test_the_nightly_measures_your_own_server_as_its_local_model(
    tmp_path: Path, cli: Cli, own_server: tuple[str, list[dict[str, Any]]]
) -> None:
    url, bodies = own_server
    root = shop_project(tmp_path, 'cases = "evals/cases"\n')
    nightly = (
        "nightly", "--adapters", "openai-compatible,anthropic-messages", "--local-models", SERVED,
        "--local-model-url", url, "--no-schemas", "--no-progress",
    )  # fmt: skip
    planned = cli(*nightly, "--dry-run", cwd=root)
    assert (
        f"openai-compatible: local model at your server {url} ({SERVED})" in planned.stdout + planned.stderr
    )
    assert "your server at a URL is offered OpenAI Chat adapters only" in planned.stdout + planned.stderr
    assert bodies == []

    done = cli(*nightly, cwd=root)
    assert done.returncode in (0, 1), done.stderr  # measured (no baseline yet to compare with)
    assert len(bodies) == 2 and {body["model"] for body in bodies} == {SERVED}
    lines = (root / "reports" / "nightly" / "results.jsonl").read_text().splitlines()
    rows = [r for r in map(json.loads, lines) if "case_id" in r]
    assert {(r["adapter"], r["source"], r["model"]) for r in rows} == {
        ("openai-compatible", "local-model", SERVED)
    }
