"""Read vcrpy cassettes in every body form found in the wild.

vcrpy writes `body.string` as text or as `!!binary` bytes (often gzip); pydantic-ai's
serializer writes JSON bodies as a YAML mapping under `parsed_body`; an APM test agent writes one
interaction per JSON file, its URL under `url` and its bodies as strings. All of them become one
`Interaction` with the body bytes as they went over the wire, decompressed.

A cassette comes from a pull request: it is read within the project's input limits
(`xpeval.evals.untrusted`): its size, the YAML nodes it stands for (aliases expanded) and what
its gzip and deflate bodies decode to, all of them together. Beyond one, it is a
`CassetteError` naming the file, and in a run the cassette's failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from xpeval.errors import CassetteError
from xpeval.evals.project import input_limits
from xpeval.evals.untrusted import (
    DecodeBudget,
    InputLimits,
    InputRefused,
    decompress,
    load_yaml,
    read_bounded,
)

_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader; the pure-Python one (same result, slower) where libyaml is missing."""

_STR, _SEQ, _MAP = (f"tag:yaml.org,2002:{kind}" for kind in ("str", "seq", "map"))


class _Shared(Exception):
    """A node met twice (an alias): the document is built by PyYAML's own constructor."""


class _Loader(_SafeLoader):  # type: ignore[misc]
    """The safe loader, building a document's strings, lists and mappings directly: a cassette
    is mostly those (its headers alone are a third of its nodes), and PyYAML's generic
    constructor spends twice the time libyaml takes to parse. Every other node (numbers, `null`,
    `!!binary`, merge keys, anything tagged) goes through the safe constructor as before, and a
    document with aliases is built by it whole, so the result is the same object tree."""

    def construct_document(self, node: Any) -> Any:
        try:
            data = self._plain(node, set())
        except _Shared:
            return super().construct_document(node)
        self.constructed_objects.clear()  # what the safe constructor built for scalars along the way
        return data

    def _plain(self, node: Any, seen: set[int]) -> Any:
        if id(node) in seen:
            raise _Shared
        seen.add(id(node))
        tag = node.tag
        if tag == _STR and isinstance(node, yaml.ScalarNode):
            return node.value
        if tag == _SEQ and isinstance(node, yaml.SequenceNode):
            return [self._plain(item, seen) for item in node.value]
        if tag == _MAP and isinstance(node, yaml.MappingNode):
            built: dict[Any, Any] = {}
            for key, value in node.value:
                if key.tag != _STR or not isinstance(key, yaml.ScalarNode):
                    return self.construct_object(node, deep=True)  # merge keys, non-string keys
                built[key.value] = self._plain(value, seen)
            return built
        return self.construct_object(node, deep=True)


@dataclass
class Interaction:
    """One recorded request/response pair."""

    index: int
    method: str
    uri: str
    request_headers: dict[str, list[str]]
    request_body: bytes | None
    status: int
    reason: str
    response_headers: dict[str, list[str]]
    response_body: bytes
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return urlsplit(self.uri).path

    def request_json(self) -> Any:
        """The request body parsed as JSON, or None when it is absent or not JSON."""
        if not self.request_body:
            return None
        try:
            return json.loads(self.request_body)
        except (ValueError, RecursionError):
            return None

    def flat_response_headers(self) -> dict[str, str]:
        return {k: (v[0] if v else "") for k, v in self.response_headers.items()}


def _headers(raw: Any) -> dict[str, list[str]]:
    if not raw:
        return {}
    if not isinstance(raw, dict):
        raise ValueError("headers are not a mapping")
    out: dict[str, list[str]] = {}
    for key, value in raw.items():
        values = value if isinstance(value, list) else [value]
        out[str(key)] = [str(v) for v in values]
    return out


def _body(part: dict[str, Any]) -> bytes | None:
    if "parsed_body" in part:
        return json.dumps(part["parsed_body"]).encode()
    body = part.get("body")
    if body is None:
        return None
    if isinstance(body, dict):
        body = body.get("string")
    if body is None:
        return None
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    raise ValueError(f"body has an unexpected type: {type(body).__name__}")


def _decompress(
    body: bytes, headers: dict[str, list[str]], budget: DecodeBudget, limits: InputLimits
) -> tuple[bytes, dict[str, list[str]]]:
    encoding = next((v[0] for k, v in headers.items() if k.lower() == "content-encoding" and v), "")
    if body[:2] == b"\x1f\x8b":
        body = decompress(body, "gzip", budget, limits)
    elif encoding.lower() == "deflate":
        body = decompress(body, "deflate", budget, limits)
    elif encoding.lower() not in ("", "identity", "gzip"):
        raise ValueError(f"unsupported content-encoding {encoding!r}")
    # What we hand on is decoded: the header would make a client decode it twice.
    kept = {k: v for k, v in headers.items() if k.lower() not in ("content-encoding", "content-length")}
    return body, kept


def _interaction(index: int, raw: Any, budget: DecodeBudget, limits: InputLimits) -> Interaction:
    if not isinstance(raw, dict) or "request" not in raw or "response" not in raw:
        raise ValueError("not a {request, response} mapping")
    request, response = raw["request"], raw["response"]
    if isinstance(response, dict) and "status_code" in response and "status" not in response:
        # vcrpy's early httpx stub wrote {status_code, headers, content}: same data, older shape.
        response = {
            "status": {"code": response["status_code"]},
            "headers": response.get("headers"),
            "body": {"string": response.get("content")},
        }
    status = response.get("status") or {}
    code = status.get("code") if isinstance(status, dict) else status
    if not isinstance(code, int):
        raise ValueError("response has no integer status code")
    response_headers = _headers(response.get("headers"))
    body = _body(response) or b""
    body, response_headers = _decompress(body, response_headers, budget, limits)
    request_headers = _headers(request.get("headers"))
    request_body = _body(request)
    if request_body:
        request_body, request_headers = _decompress(request_body, request_headers, budget, limits)
    return Interaction(
        index=index,
        method=str(request.get("method", "POST")).upper(),
        uri=str(request.get("uri", "")),
        request_headers=request_headers,
        request_body=request_body,
        status=code,
        reason=str(status.get("message", "")) if isinstance(status, dict) else "",
        response_headers=response_headers,
        response_body=body,
    )


def load_interactions(
    data: Any, source: str = "<cassette>", limits: InputLimits | None = None
) -> list[Interaction]:
    """Interactions from an already-parsed cassette document; its encoded bodies decode to at
    most the limits' `max_bytes` in all (default: the project's limits)."""
    data = _paired_form(_apm_form(data))
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{source}: not a vcrpy cassette (no 'interactions' list)")
    limits = limits or input_limits()
    budget = DecodeBudget.of(limits)
    out = []
    for index, raw in enumerate(data["interactions"]):
        try:
            out.append(_interaction(index, raw, budget, limits))
        except InputRefused as exc:
            raise CassetteError(f"{source}: cassette refused: interaction {index}: {exc}") from exc
        except (ValueError, TypeError, OSError, EOFError, RecursionError) as exc:
            raise CassetteError(f"{source}: interaction {index} is malformed: {exc}") from exc
    return out


def _apm_form(data: Any) -> Any:
    """An APM test agent's recording (one interaction: `{"request": {method, url, headers,
    body}, "response": {status, headers, body}}`, bodies as strings) as a one-interaction
    cassette; anything else unchanged."""
    if not isinstance(data, dict) or "interactions" in data or set(data) != {"request", "response"}:
        return data
    request = data["request"]
    if not isinstance(request, dict) or "url" not in request or "uri" in request:
        return data
    return {"interactions": [{"request": {**request, "uri": request["url"]}, "response": data["response"]}]}


def _paired_form(data: Any) -> Any:
    """A cassette of parallel `requests:` and `responses:` lists (vcrpy's in-memory shape, as
    langchain-aws saves it) as one of `interactions:`; anything else unchanged."""
    if not isinstance(data, dict) or "interactions" in data:
        return data
    requests, responses = data.get("requests"), data.get("responses")
    if not isinstance(requests, list) or not isinstance(responses, list) or len(requests) != len(responses):
        return data
    return {"interactions": [{"request": q, "response": r} for q, r in zip(requests, responses, strict=True)]}


def read_document(path: Path, limits: InputLimits | None = None) -> Any:
    """The parsed YAML of a cassette file, or a CassetteError naming it (default: the project's
    limits)."""
    limits = limits or input_limits()
    try:
        text = read_bounded(path, limits)
    except InputRefused as exc:
        raise CassetteError(f"{path}: cassette refused: {exc}") from exc
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read cassette: {exc.strerror or exc}") from exc
    if path.suffix == ".gz":  # a whole cassette gzip-compressed (`.yaml.gz`), decoded within the limits
        try:
            text = decompress(text, "gzip", DecodeBudget.of(limits), limits)
        except InputRefused as exc:
            raise CassetteError(f"{path}: cassette refused: {exc}") from exc
        except (ValueError, OSError, EOFError) as exc:
            raise CassetteError(f"{path}: not a gzip file: {exc}") from exc
    if path.suffix == ".json":  # an APM test agent's recording: JSON, which YAML does not always read
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise CassetteError(f"{path}: not valid JSON: {exc}") from exc
    try:
        return load_yaml(text, _Loader, limits)
    except InputRefused as exc:
        raise CassetteError(f"{path}: cassette refused: {exc}") from exc
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        raise CassetteError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from exc


def load_cassette(path: str | Path, limits: InputLimits | None = None) -> list[Interaction]:
    """Every interaction in the cassette at `path`."""
    p = Path(path)
    limits = limits or input_limits()
    return load_interactions(read_document(p, limits), str(p), limits)
