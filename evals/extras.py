"""The optional parts of xpeval (pyproject.toml's extras), and how to install one from wherever
this xpeval came from.

A hint that names `pip install 'xpeval[report]'` is wrong for a checkout or a Git install: pip
would look for xpeval on the package index. So the hint is built from the installation's own
record (`direct_url.json`, PEP 610): a local folder gets its path, a VCS install its URL and
commit, and only an index install gets the plain name with its version.
"""

from __future__ import annotations

import json
from importlib import metadata
from urllib.parse import unquote, urlparse

# The importable module behind each optional dependency, and the extra that brings it.
EXTRA_OF_MODULE: dict[str, str] = {
    "matplotlib": "report",
    "nbclient": "report",
    "nbformat": "report",
    "ipykernel": "report",
    # bfcl-eval itself is installed apart, with --no-deps (its pins): its own hint says how
    # (evals/cases/environment.py); the extra brings what its API classes import.
    "mpmath": "bfcl",
    "pydantic_ai": "bench",
}


def extra_for_module(module: str | None) -> str | None:
    """The extra that installs `module` (a dotted name: its top package decides), or None."""
    if not module:
        return None
    return EXTRA_OF_MODULE.get(module.split(".", 1)[0])


def install_command(extra: str) -> str:
    """The pip command that adds `extra` to this xpeval, from where it was installed."""
    try:
        dist = metadata.distribution("xpeval")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return f"pip install -e '.[{extra}]'"
    return _command_for(dist.read_text("direct_url.json"), dist.version, extra)


def _command_for(direct_url: str | None, version: str, extra: str) -> str:
    if not direct_url:
        return f"pip install 'xpeval[{extra}]=={version}'"
    try:
        record = json.loads(direct_url)
        url = str(record["url"])
    except (ValueError, KeyError, TypeError):
        return f"pip install 'xpeval[{extra}]=={version}'"
    if "vcs_info" in record:
        vcs = record["vcs_info"]
        commit = f"@{vcs['commit_id']}" if vcs.get("commit_id") else ""
        return f"pip install 'xpeval[{extra}] @ {vcs.get('vcs', 'git')}+{url}{commit}'"
    parsed = urlparse(url)
    if parsed.scheme == "file" and "dir_info" in record:
        path = unquote(parsed.path)
        editable = "-e " if record["dir_info"].get("editable") else ""
        return f"pip install {editable}'{path}[{extra}]'"
    return f"pip install 'xpeval[{extra}] @ {url}'"
