"""`xpeval decode` on cassettes that are broken, old-fashioned or mixed with non-provider calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

CHAT_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
        }
    ],
}


def decode(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evals.cli", "decode", "--json", str(path)], capture_output=True, text=True
    )


def write(tmp_path: Path, document: object, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    return path


def chat_request() -> dict[str, object]:
    return {
        "method": "POST",
        "uri": "https://api.openai.com/v1/chat/completions",
        "body": json.dumps({"model": "m", "messages": []}),
        "headers": {},
    }


def test_a_malformed_cassette_is_one_clear_line_naming_the_file(tmp_path: Path) -> None:
    for document in (
        "interactions: [unclosed",
        {"no": "interactions"},
        {"interactions": [{"request": {}, "response": {"status": "x"}}]},
    ):
        path = write(tmp_path, document)
        done = decode(path)
        assert done.returncode == 2
        assert str(path) in done.stderr and "Traceback" not in done.stderr


def test_vcrpys_early_httpx_format_is_read(tmp_path: Path) -> None:
    old = {
        "interactions": [
            {
                "request": chat_request(),
                "response": {
                    "status_code": 200,
                    "headers": {"content-type": ["application/json"]},
                    "content": json.dumps(CHAT_BODY),
                },
            }
        ]
    }
    done = decode(write(tmp_path, old))
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)
    assert row["tool_calls"] == [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}}]


def test_non_provider_calls_are_skipped_with_a_note_and_numbering_kept(tmp_path: Path) -> None:
    token = {
        "request": {
            "method": "POST",
            "uri": "https://oauth2.googleapis.com/token",
            "body": "",
            "headers": {},
        },
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}},
    }
    chat = {
        "request": chat_request(),
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": json.dumps(CHAT_BODY)},
        },
    }
    done = decode(write(tmp_path, {"interactions": [token, chat]}))
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["interaction"] for line in done.stdout.splitlines()] == [1]
    assert "skipped interaction 0" in done.stderr


def test_broken_argument_json_is_shown_with_its_text_and_reason_not_as_empty(tmp_path: Path) -> None:
    body = json.loads(json.dumps(CHAT_BODY))
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"city": "Os'
    chat = {
        "request": chat_request(),
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": json.dumps(body)},
        },
    }
    done = decode(write(tmp_path, {"interactions": [chat]}))
    assert done.returncode == 0, done.stderr
    [call] = json.loads(done.stdout)["tool_calls"]
    assert call["raw_arguments"] == '{"city": "Os' and call["parse_error"]
