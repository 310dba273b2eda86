"""Bedrock batch inference for the bedrock-converse wire, written against `xpeval.plugin` only
(the wire names it in its `WirePlugin`, as a plugin's wire would).

A job reads a JSONL file in S3, one `{"recordId", "modelInput"}` line a request, `modelInput`
the Converse request body (the job's `modelInvocationType` is `Converse`; the model is the job's,
not the lines'). It writes, under its output S3 prefix and its job id, `<input file>.out`: one
line a record, `{"recordId", "modelInput", "modelOutput"}` with the Converse response, or
`"error": {"errorCode", "errorMessage"}` in its place, in no guaranteed order; and
`manifest.json.out` (counts). Its states: Submitted, Validating, Scheduled, InProgress,
Stopping (still running); Completed, PartiallyCompleted (over, answers kept); Failed, Stopped,
Expired. A job has a name (xpeval's id of the batch, so a run killed between creating it and
writing its id down finds it again by `list_model_invocation_jobs(nameContains=...)`) and a
client request token (the same id: Bedrock ignores a second create with it). docs/batch.md,
"Bedrock", says where each fact comes from and which settings a live run needs.

Every call goes through boto3's clients (`bedrock` and `s3`, the adapter's `service_call`),
whose requests xpeval's transport answers like the runtime's, so the emulator serves them on
loopback: its side of the same endpoints is `serve` (S3's REST with XML listings and errors, the
control plane's JSON) and `finish` (the output an ended job leaves in S3).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit
from xml.sax.saxutils import escape

from xpeval.plugin import (
    BatchAnswer,
    BatchLimits,
    BatchRequest,
    BatchStatus,
    EmulatedBatch,
    EmulatedService,
    HttpAnswer,
)

API_NAME = "bedrock"
SETTINGS = {"role": "XPEVAL_BEDROCK_BATCH_ROLE_ARN", "s3": "XPEVAL_BEDROCK_BATCH_S3_URI"}
"""Where a live run's settings are read (the environment, as the wire's region is): the service
role Bedrock assumes, and the `s3://bucket/prefix` its jobs read and write."""
INPUT_NAME = "input.jsonl"
EMULATED_ROLE = "arn:aws:iam::000000000000:role/xpeval-emulated-batch"
EMULATED_S3 = "s3://xpeval-emulated-batch/xpeval"
"""What a run against the emulator uses when the settings are not given (it checks neither)."""
_ARN = "arn:aws:bedrock:us-east-1:000000000000:model-invocation-job/"
_STATES = {
    "Submitted": "pending",
    "Validating": "pending",
    "Scheduled": "pending",
    "InProgress": "pending",
    "Stopping": "pending",
    "Completed": "ended",
    "PartiallyCompleted": "ended",
    "Failed": "failed",
    "Stopped": "cancelled",
    "Expired": "expired",
}
"""A job's status (botocore's `ModelInvocationJobStatus`) as xpeval's batch state."""

_PROFILES = ("", "us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.")
"""A model is asked by its id or through an inference profile: the id behind a region prefix."""
MIN_RECORDS: dict[str, int] = {
    "anthropic.claude-3-haiku-20240307-v1:0": 100,
    "anthropic.claude-3-5-haiku-20241022-v1:0": 100,
    "anthropic.claude-3-5-sonnet-20240620-v1:0": 100,
    "anthropic.claude-3-5-sonnet-20241022-v2:0": 100,
    "anthropic.claude-3-7-sonnet-20250219-v1:0": 100,
    "anthropic.claude-sonnet-4-20250514-v1:0": 100,
    "anthropic.claude-sonnet-4-5-20250929-v1:0": 100,
    "anthropic.claude-haiku-4-5-20251001-v1:0": 100,
    "anthropic.claude-opus-4-1-20250805-v1:0": 100,
    "amazon.nova-micro-v1:0": 100,
    "amazon.nova-lite-v1:0": 100,
    "amazon.nova-pro-v1:0": 100,
    "meta.llama3-1-8b-instruct-v1:0": 100,
    "meta.llama3-1-70b-instruct-v1:0": 100,
    "mistral.mistral-large-2407-v1:0": 100,
}
"""The fewest records a job of each model takes: AWS's per-model quota "Minimum number of records
per batch inference job for <model>", its default value (docs/batch.md, "Bedrock"). An account
may see another value in Service Quotas. A model not listed has no minimum xpeval knows: its job
is created, and Bedrock refuses one too small (its episodes are then `batch_failed` rows)."""


def _by_model() -> dict[str, int]:
    return {prefix + model: count for model, count in MIN_RECORDS.items() for prefix in _PROFILES}


class Refused(Exception):
    """Bedrock or S3 answered a call with a client error (4xx): the job was not created."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code


def _line(request: BatchRequest) -> bytes:
    line = {"recordId": request.custom_id, "modelInput": request.json()}
    return (json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def _model_of(path: str) -> str:
    found = re.search(r"/model/([^/?#]+)/converse", path)
    if found is None:
        raise ValueError(f"{path}: not a Converse request path")
    return unquote(found.group(1))


def _s3(uri: str) -> tuple[str, str]:
    """(bucket, key or prefix) of `s3://bucket/key`."""
    found = re.fullmatch(r"s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:/(.*))?", uri)
    if found is None:
        raise ValueError(f"{uri!r} is not an S3 location (s3://bucket/prefix)")
    return found.group(1), found.group(2) or ""


def _setting(name: str) -> str | None:
    return os.environ.get(SETTINGS[name]) or None


def _settings() -> tuple[str, str]:
    """The role and the S3 location: the settings, else the emulator's (a live run without them
    was refused before anything was asked: `unusable`)."""
    role = _setting("role") or EMULATED_ROLE
    where = _setting("s3") or EMULATED_S3
    return role, where.rstrip("/")


async def _call(client: Any, service: str, operation: str, **arguments: Any) -> Any:
    """One boto3 call; a client error (4xx) is `Refused`, anything else as it came."""
    from botocore.exceptions import ClientError

    try:
        return await client.service_call(service, operation, arguments)
    except ClientError as exc:
        status = (exc.response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
        if isinstance(status, int) and 400 <= status < 500:
            raise Refused(status, f"{service} {operation}: {exc}") from exc
        raise


class BedrockBatch:
    name = API_NAME
    limits = BatchLimits(
        max_requests=50_000, max_bytes=1024 * 1024 * 1024, min_requests_by_model=_by_model(), tools=False
    )
    """AWS's default quotas: records per job and per input file 50,000, an input file 1 GB. And a
    `Converse` job refuses a record whose `modelInput` has `toolConfig` (400): AWS's user guide,
    "Process multiple prompts with batch inference"."""

    def unusable(self, emulated: bool) -> str | None:
        if emulated:
            return None
        missing = [SETTINGS[name] for name in ("role", "s3") if not _setting(name)]
        if missing:
            return (
                f"Bedrock batch inference needs {' and '.join(missing)} (the service role Bedrock "
                "assumes, and the s3://bucket/prefix it reads and writes; docs/batch.md, 'Bedrock')"
            )
        try:
            _s3(str(_setting("s3")))
        except ValueError as exc:
            return f"{SETTINGS['s3']}: {exc}"
        import boto3

        if boto3.session.Session().get_credentials() is None:
            return (
                "Bedrock batch inference writes to S3, which needs AWS credentials "
                "(a Bedrock API key is none)"
            )
        return None

    def line_path(self, base_url: str, url_path: str) -> str:
        return url_path

    def request_bytes(self, request: BatchRequest) -> int:
        return len(_line(request))

    async def submit(self, client: Any, requests: Sequence[BatchRequest], tag: str) -> str:
        models = {_model_of(r.path) for r in requests}
        if len(models) != 1:
            raise ValueError(f"one job holds one model's requests, not {sorted(models)}")
        role, where = _settings()
        bucket, prefix = _s3(f"{where}/{tag}")
        await _call(
            client,
            "s3",
            "put_object",
            Bucket=bucket,
            Key=f"{prefix}/{INPUT_NAME}",
            Body=b"".join(_line(r) for r in requests),
            ContentType="application/jsonl",
        )
        job = await _call(
            client,
            "bedrock",
            "create_model_invocation_job",
            jobName=tag,
            clientRequestToken=tag,  # a second create with it is ignored by Bedrock
            roleArn=role,
            modelId=models.pop(),
            inputDataConfig={
                "s3InputDataConfig": {
                    "s3Uri": f"s3://{bucket}/{prefix}/{INPUT_NAME}",
                    "s3InputFormat": "JSONL",
                }
            },
            outputDataConfig={"s3OutputDataConfig": {"s3Uri": f"s3://{bucket}/{prefix}/output/"}},
            modelInvocationType="Converse",
        )
        return str(job["jobArn"])

    async def status(self, client: Any, batch_id: str) -> BatchStatus:
        job = await _call(client, "bedrock", "get_model_invocation_job", jobIdentifier=batch_id)
        status = str(job.get("status"))
        counts = {
            key.removesuffix("RecordCount"): int(job[key])
            for key in ("totalRecordCount", "successRecordCount", "errorRecordCount")
            if isinstance(job.get(key), int)
        }
        detail = f"{status}: {job['message']}" if job.get("message") else status
        return BatchStatus(id=batch_id, state=_STATES.get(status, "pending"), detail=detail, counts=counts)  # type: ignore[arg-type]

    async def answers(self, client: Any, batch_id: str) -> list[BatchAnswer]:
        job = await _call(client, "bedrock", "get_model_invocation_job", jobIdentifier=batch_id)
        output = str(job["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"])
        bucket, prefix = _s3(output.rstrip("/"))
        folder = f"{prefix}/{batch_id.rsplit('/', 1)[-1]}/".lstrip("/")
        out: list[BatchAnswer] = []
        for key in await _keys(client, bucket, folder):
            if not key.endswith(".jsonl.out"):
                continue  # manifest.json.out: counts, which the lines themselves give
            got = await _call(client, "s3", "get_object", Bucket=bucket, Key=key)
            content = await asyncio.to_thread(
                got["Body"].read
            )  # read in a thread: the bridge's loop serves it
            out.extend(_answer(json.loads(line)) for line in content.splitlines() if line.strip())
        return out

    async def find(self, client: Any, tag: str, count: int, since: float) -> list[str]:
        found: list[str] = []
        arguments: dict[str, Any] = {
            "nameContains": tag,
            "submitTimeAfter": datetime.fromtimestamp(since, UTC),
            "maxResults": 100,
        }
        while True:
            page = await _call(client, "bedrock", "list_model_invocation_jobs", **arguments)
            found += [
                str(s["jobArn"]) for s in page.get("invocationJobSummaries", []) if s.get("jobName") == tag
            ]
            if not page.get("nextToken"):
                return found
            arguments["nextToken"] = page["nextToken"]

    # --- the emulator's side -------------------------------------------------------------

    def finish(self, batch: EmulatedBatch, service: EmulatedService) -> None:
        """The output an ended job leaves in S3. A job has no per-record expiry: a record the
        emulator expires makes the job Expired, its output holding what it finished."""
        if any(a.outcome == "expired" for a in batch.answers):
            batch.state = "expired"
        lines = [_output_line(a, batch) for a in batch.answers if a.outcome in ("succeeded", "errored")]
        folder = f"{(batch.output_uri or '').rstrip('/')}/{batch.id}"
        service.put_object(
            f"{folder}/{INPUT_NAME}.out", b"".join(json.dumps(x).encode() + b"\n" for x in lines)
        )
        failed = sum(1 for x in lines if "error" in x)
        manifest = {
            "totalRecordCount": len(batch.requests),
            "processedRecordCount": len(lines),
            "successRecordCount": len(lines) - failed,
            "errorRecordCount": failed,
        }
        service.put_object(f"{folder}/manifest.json.out", json.dumps(manifest).encode())

    def serve(
        self, method: str, path: str, headers: dict[str, str], body: bytes, service: EmulatedService
    ) -> HttpAnswer | None:
        if "/s3/aws4_request" in headers.get("authorization", ""):
            return _serve_s3(method, path, headers.get("x-emulator-origin", ""), body, service)
        route = re.fullmatch(r"/model-invocation-job(s)?(?:/([^?]+))?(?:\?(.*))?", path)
        if route is None:
            return None
        listing, item, query = route.groups()
        if listing and method == "GET":
            return _list(parse_qs(query or ""), service)
        if not listing and item is None and method == "POST":
            return _create(json.loads(body or b"{}"), service)
        if not listing and item is not None and method == "GET":
            found = service.batch(unquote(item).rsplit("/", 1)[-1])
            if found is None or found.api != API_NAME:
                return _error(404, "ResourceNotFoundException", f"no job {unquote(item)}")
            return HttpAnswer(200, json.dumps(_render(found)).encode())
        return None


async def _keys(client: Any, bucket: str, prefix: str) -> list[str]:
    keys: list[str] = []
    arguments: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix}
    while True:
        page = await _call(client, "s3", "list_objects_v2", **arguments)
        keys += [str(item["Key"]) for item in page.get("Contents", [])]
        if not page.get("IsTruncated"):
            return keys
        arguments["ContinuationToken"] = page["NextContinuationToken"]


def _answer(line: dict[str, Any]) -> BatchAnswer:
    custom_id = str(line.get("recordId"))
    if isinstance(line.get("modelOutput"), dict):
        return BatchAnswer(custom_id, "succeeded", 200, json.dumps(line["modelOutput"]).encode())
    found = line.get("error")
    error: dict[str, Any] = found if isinstance(found, dict) else {}
    code = str(error.get("errorCode", ""))
    status = int(code) if code.isdecimal() and 400 <= int(code) < 600 else None
    message = str(error.get("errorMessage") or line)
    body = json.dumps({"message": message}).encode()
    return BatchAnswer(custom_id, "errored", status, body, message, code or None)


def _output_line(answer: BatchAnswer, batch: EmulatedBatch) -> dict[str, Any]:
    sent = next((r.json() for r in batch.requests if r.custom_id == answer.custom_id), {})
    line: dict[str, Any] = {"recordId": answer.custom_id, "modelInput": sent}
    if answer.outcome == "succeeded" and answer.body is not None:
        return line | {"modelOutput": json.loads(answer.body)}
    return line | {"error": {"errorCode": answer.status or 500, "errorMessage": answer.message or "errored"}}


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _status(batch: EmulatedBatch) -> str:
    if batch.state == "ended":
        whole = len(batch.answers) == len(batch.requests) and all(
            a.outcome == "succeeded" for a in batch.answers
        )
        return "Completed" if whole else "PartiallyCompleted"
    return {"pending": "InProgress", "failed": "Failed", "cancelled": "Stopped", "expired": "Expired"}[
        batch.state
    ]


def _render(batch: EmulatedBatch) -> dict[str, Any]:
    failed = sum(1 for a in batch.answers if a.outcome != "succeeded")
    return {
        "jobArn": _ARN + batch.id,
        "jobName": batch.tag,
        "modelId": batch.endpoint,
        "clientRequestToken": batch.tag,
        "roleArn": EMULATED_ROLE,
        "status": _status(batch),
        "submitTime": _iso(batch.created_at),
        "lastModifiedTime": _iso(time.time()),
        "inputDataConfig": {"s3InputDataConfig": {"s3Uri": batch.input_file_id, "s3InputFormat": "JSONL"}},
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": batch.output_uri}},
        "modelInvocationType": "Converse",
        "totalRecordCount": len(batch.requests),
        "successRecordCount": len(batch.answers) - failed,
        "errorRecordCount": failed,
    }


def _create(asked: dict[str, Any], service: EmulatedService) -> HttpAnswer:
    token = asked.get("clientRequestToken")
    for earlier in service.batches():
        if earlier.api == API_NAME and token and earlier.tag == token:
            return HttpAnswer(200, json.dumps({"jobArn": _ARN + earlier.id}).encode())  # idempotent
    if asked.get("modelInvocationType") != "Converse":
        return _error(400, "ValidationException", "the emulator runs Converse jobs only")
    source = str(((asked.get("inputDataConfig") or {}).get("s3InputDataConfig") or {}).get("s3Uri"))
    content = service.objects(source).get(source)
    if content is None:
        return _error(400, "ValidationException", f"no input at {source}")
    model = str(asked.get("modelId"))
    requests = []
    for raw in content.splitlines():
        if raw.strip():
            line = json.loads(raw)
            path = f"/model/{quote(model, safe='')}/converse"
            requests.append(
                BatchRequest(str(line["recordId"]), path, json.dumps(line["modelInput"]).encode())
            )
    output = ((asked.get("outputDataConfig") or {}).get("s3OutputDataConfig") or {}).get("s3Uri")
    made = service.create(
        API_NAME, requests, tag=asked.get("jobName"), endpoint=model, input_file_id=source, output_uri=output
    )
    return HttpAnswer(200, json.dumps({"jobArn": _ARN + made.id}).encode())


def _list(query: dict[str, list[str]], service: EmulatedService) -> HttpAnswer:
    name = (query.get("nameContains") or [""])[0]
    after = (query.get("submitTimeAfter") or [""])[0]
    since = datetime.fromisoformat(after.replace("Z", "+00:00")).timestamp() if after else 0.0
    own = [
        b
        for b in service.batches()
        if b.api == API_NAME and name in (b.tag or "") and b.created_at >= int(since)
    ]
    listed = [_render(b) for b in sorted(own, key=lambda b: -b.created_at)]
    return HttpAnswer(200, json.dumps({"invocationJobSummaries": listed}).encode())


def _error(status: int, kind: str, message: str) -> HttpAnswer:
    return HttpAnswer(status, json.dumps({"__type": kind, "message": message}).encode())


def _serve_s3(method: str, path: str, origin: str, body: bytes, service: EmulatedService) -> HttpAnswer:
    """S3's REST: an object put and got whole, a bucket listed (ListObjectsV2), in either
    addressing style (the bucket in the host or first in the path)."""
    parts = urlsplit(path)
    virtual = re.match(r"https?://(.+?)\.s3[.-]", origin)
    segments = unquote(parts.path).lstrip("/")
    bucket, _, key = (virtual.group(1), "", segments) if virtual else segments.partition("/")
    uri = f"s3://{bucket}/{key}"
    query = parse_qs(parts.query)
    if method == "PUT" and key:
        service.put_object(uri, body)
        return HttpAnswer(200, b"", "application/xml")
    if method == "GET" and key:
        found = service.objects(uri).get(uri)
        if found is None:
            return _s3_error(404, "NoSuchKey", f"{uri} does not exist")
        return HttpAnswer(200, found, "application/octet-stream")
    if method == "GET" and query.get("list-type") == ["2"]:
        prefix = (query.get("prefix") or [""])[0]
        found_all = service.objects(f"s3://{bucket}/{prefix}")
        contents = "".join(
            f"<Contents><Key>{escape(name.removeprefix(f's3://{bucket}/'))}</Key><Size>{len(data)}</Size></Contents>"
            for name, data in sorted(found_all.items())
        )
        xml = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            f"<Name>{escape(bucket)}</Name><Prefix>{escape(prefix)}</Prefix><KeyCount>{len(found_all)}</KeyCount>"
            f"<MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>{contents}</ListBucketResult>"
        )
        return HttpAnswer(200, xml.encode(), "application/xml")
    return _s3_error(400, "InvalidRequest", f"the emulator does not serve {method} {parts.path}")


def _s3_error(status: int, code: str, message: str) -> HttpAnswer:
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f"<Error><Code>{code}</Code><Message>{escape(message)}</Message></Error>"
    )
    return HttpAnswer(status, xml.encode(), "application/xml")


API = BedrockBatch()
