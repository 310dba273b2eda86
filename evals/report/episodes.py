"""The per-episode view: each episode's case (messages, expected calls), the calls the model
made, the verdict and the reason, as plain HTML.

Episodes are grouped per source, adapter and model, failures first; each is a `<details>`
element (closed, so a page of thousands stays light to scroll, and the browser's own find opens
the one it finds). A case's messages are written once, in the page's case list, and copied into
an episode when it is opened (the page's small inline script): a run plays every case through
every adapter, so writing them into each episode would repeat each case once per adapter and
model. Past `max_per_group` episodes in a group, the rest of the correct ones are counted, not
shown (failures come first, so they are the last to be cut).

The calls, texts and error messages are not in the tidy frame (`xpeval.evals.results.load` leaves nested
fields
out on purpose); `read_details` streams them from the results file for the episodes shown only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xpeval.evals.cases.model import Case, Expected
from xpeval.evals.report.plots import row_label, source_badge, source_caption
from xpeval.evals.results.rows import EpisodeKey
from xpeval.evals.verdict.scorecard import SOURCE_ORDER

DEFAULT_MAX_PER_GROUP = 1000


@dataclass(frozen=True)
class EpisodeDetail:
    """What a results row holds beyond the tidy frame: the calls, the model's last text, its
    refusal, the error message, and which values were cut (`xpeval.evals.results.file.bounded`)."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    text: str | None = None
    refusal: str | None = None
    error_message: str | None = None
    truncated: list[dict[str, Any]] = field(default_factory=list)


def read_details(path: Path, keys: Iterable[EpisodeKey] | None = None) -> dict[EpisodeKey, EpisodeDetail]:
    """Each episode's details from its final row in the results file (the last such row wins,
    as in `xpeval.evals.results.load.frame_of`); only `keys` when given. Line by line: memory follows what is
    kept, not the file's size; a torn last line is skipped."""
    wanted = set(keys) if keys is not None else None
    details: dict[EpisodeKey, EpisodeDetail] = {}
    with Path(path).open("rb") as handle:
        for line in handle:
            # Rows are written compact (`xpeval.evals.results.file.ResultsFile`): cheap tests before parsing,
            # so a million-row file costs a parse only for the rows shown.
            if b'"final":true' not in line or not line.endswith(b"\n"):
                continue
            if wanted is not None and (found := _key_of(line)) is not None and found not in wanted:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if (
                not isinstance(record, dict)
                or record.get("type") != "result"
                or record.get("final") is not True
            ):
                continue
            key = (str(record.get("case_id")), str(record.get("adapter")), str(record.get("model")))
            if wanted is not None and key not in wanted:
                continue
            details[key] = EpisodeDetail(
                calls=[c for c in record.get("calls") or [] if isinstance(c, dict)],
                text=record.get("text"),
                refusal=record.get("refusal"),
                error_message=record.get("error_message"),
                truncated=[t for t in record.get("truncated") or [] if isinstance(t, dict)],
            )
    return details


_FIELD = {
    name: re.compile(rb'"' + name.encode() + rb'":("(?:[^"\\]|\\.)*")')
    for name in ("case_id", "adapter", "model")
}


def _key_of(line: bytes) -> EpisodeKey | None:
    """The row's (case, adapter, model) read without parsing the row; None when unsure (the row
    is then parsed whole). The first match of each is the row's own: those fields come before
    the calls, whose arguments could hold the same text."""
    parts = []
    for pattern in _FIELD.values():
        match = pattern.search(line)
        if match is None:
            return None
        try:
            parts.append(str(json.loads(match.group(1))))
        except ValueError:
            return None
    return (parts[0], parts[1], parts[2])


def verdict_of(row: Mapping[str, Any]) -> tuple[str, str]:
    """(class, label) of an episode: `error` (the provider or replay failed), `malformed`,
    `incorrect` or `correct`."""
    if isinstance(row.get("error_kind"), str) and row["error_kind"]:
        return "error", f"error: {row['error_kind']}"
    if bool(row.get("correct")):
        return "correct", "correct"
    if bool(row.get("malformed")):
        return "malformed", "malformed call"
    if row.get("correct") is None:
        return "unlabelled", "unlabelled (judged against a reference)"
    return "incorrect", "incorrect"


def _t(text: object) -> str:
    """Escaped for a text node (quotes need no escaping there, and arguments are full of them)."""
    return escape(str(text), quote=False)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def _expected_html(expected: Expected | None) -> str:
    if expected is None:
        return '<div class="expected"><b>unlabelled</b>: judged against a reference row</div>'
    if expected.no_call:
        return '<div class="expected"><b>expected</b> no call</div>'
    if expected.any_call:
        return '<div class="expected"><b>expected</b> a call of any tool (relevance)</div>'
    calls = "".join(
        f'<li><code>{_t(call.name)}</code> <code class="args">{_t(_compact(call.arguments))}</code></li>'
        for call in expected.calls
    )
    return (
        '<div class="expected"><b>expected</b> (any order; each argument: one of the listed values, '
        f'"" = may be left out)<ul>{calls}</ul></div>'
    )


def _message_html(message: Any) -> str:
    role = str(getattr(message, "role", "?"))
    parts: list[str] = []
    content = getattr(message, "content", None)
    if content:
        parts.append(f'<span class="content">{_t(str(content))}</span>')
    for call in getattr(message, "tool_calls", None) or []:
        parts.append(f"<code>{_t(call.name)}({_t(_compact(call.arguments))})</code>")
    if role == "tool":
        parts.insert(0, f"<code>{_t(str(getattr(message, 'name', '')))}</code> returned")
    return f'<div class="msg role-{escape(role)}"><b>{_t(role)}</b> {" ".join(parts)}</div>'


def case_html(case: Case) -> str:
    """A case as the page lists it: its tools, then per turn its messages and expected calls."""
    tools = ", ".join(f"<code>{_t(tool.name)}</code>" for tool in case.tools) or "none"
    turns = []
    for turn in case.turns:
        messages = "".join(_message_html(m) for m in turn.messages)
        turns.append(
            f'<div class="turn"><h5>turn {turn.index}</h5>{messages}{_expected_html(turn.expected)}</div>'
        )
    approvals = ""
    if case.approvals:
        approvals = (
            "<p><b>approvals</b> "
            + ", ".join(
                f"<code>{_t(tool)}</code>: {_t(decision)}" for tool, decision in case.approvals.items()
            )
            + "</p>"
        )
    return (
        f'<details class="case" id="case-{escape(case.id)}"><summary><code>{_t(case.id)}</code> '
        f'<span class="cat">{_t(case.category)}</span> '
        f'<span class="origin">{_t(case.origin)}</span></summary>'
        f'<div class="case-body"><p><b>tools offered</b> {tools}</p>{"".join(turns)}{approvals}</div>'
        "</details>"
    )


def _calls_html(calls: list[dict[str, Any]]) -> str:
    if not calls:
        return "<p><b>calls</b> no call</p>"
    items = []
    for call in calls:
        problem = call.get("parse_error")
        note = (
            f' <span class="parse-error">unparsable arguments: {_t(str(problem))}</span>' if problem else ""
        )
        items.append(
            f"<li>turn {_t(str(call.get('turn', '?')))}: <code>{_t(str(call.get('name')))}"
            f"({_t(_compact(call.get('arguments') or {}))})</code>{note}</li>"
        )
    return f"<div><b>calls the model made</b><ol>{''.join(items)}</ol></div>"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def episode_html(row: Mapping[str, Any], detail: EpisodeDetail | None, *, case_known: bool) -> str:
    """One episode: a `<details>` whose summary is the verdict, case and reason."""
    verdict, label = verdict_of(row)
    reason = _text(row.get("reason"))
    case_id = str(row["case_id"])
    link = (
        f'<a href="#case-{escape(case_id)}">case {_t(case_id)}: messages and expected calls</a>'
        if case_known
        else f"case {_t(case_id)} is not in the case set this page was built with"
    )
    body = [f'<div class="ep-case">{link}</div>']
    if detail is None:
        body.append("<p><b>calls</b> (not in the results file)</p>")
    else:
        body.append(_calls_html(detail.calls))
        if _text(detail.refusal):
            body.append(f"<p><b>refusal</b> {_t(str(detail.refusal))}</p>")
        if _text(detail.text):
            body.append(f'<p><b>last text</b> <span class="content">{_t(str(detail.text))}</span></p>')
        if _text(detail.error_message):
            kind = _t(f"{row.get('error_kind')} {row.get('error_type') or ''}".strip())
            body.append(f"<p><b>error</b> {kind}: {_t(str(detail.error_message))}</p>")
        if detail.truncated:
            cut = ", ".join(
                f"{_t(str(t.get('field')))} ({_t(str(t.get('bytes')))} bytes)" for t in detail.truncated
            )
            body.append(f"<p><b>cut to fit the results file</b> {cut}</p>")
    body.append(f"<p><b>verdict</b> {_t(label)}" + (f": {_t(reason)}" if reason else "") + "</p>")
    body.append(f'<p class="meta">{_t(_meta(row))}</p>')
    summary = (
        f'<span class="v v-{verdict}">{_t(label)}</span> <code>{_t(case_id)}</code> '
        f'<span class="cat">{_t(str(row.get("category")))}</span>'
        + (f' <span class="reason">{_t(_short(reason))}</span>' if reason else "")
    )
    return (
        f'<details class="ep" data-verdict="{verdict}" data-case="{escape(case_id)}">'
        f'<summary>{summary}</summary><div class="ep-body">{"".join(body)}</div></details>'
    )


SUMMARY_REASON = 160
"""Characters of the reason an episode's summary line shows (its body has it whole)."""


def _short(text: str) -> str:
    return text if len(text) <= SUMMARY_REASON else text[: SUMMARY_REASON - 1] + "…"


def _meta(row: Mapping[str, Any]) -> str:
    parts = [f"attempts {row.get('attempts')}", f"steps {row.get('steps')}"]
    recorded = row.get("recorded_at")
    if isinstance(recorded, str) and recorded:
        parts.append(f"replayed from a recording of {recorded[:10]} (so no latency)")
    elif isinstance(row.get("latency_s"), float) and row["latency_s"] == row["latency_s"]:
        parts.append(f"answered in this run in {row['latency_s']:.3f} s")
    tokens_in, tokens_out = row.get("input_tokens"), row.get("output_tokens")
    if tokens_in is not None and not pd.isna(tokens_in):
        parts.append(f"tokens {tokens_in} in / {tokens_out} out")
    return " · ".join(parts)


_VERDICT_ORDER = {"error": 0, "malformed": 1, "incorrect": 2, "unlabelled": 3, "correct": 4}


def ordered_groups(frame: pd.DataFrame) -> list[tuple[tuple[str, str, str], pd.DataFrame]]:
    """The episodes per (source, adapter, model), in `SOURCE_ORDER`, each group failures first
    (errors, malformed calls, incorrect, then correct; by case id within each)."""
    if frame.empty:
        return []
    verdict = verdicts(frame)
    ranked = frame.assign(
        verdict=verdict,
        _rank=verdict.map(_VERDICT_ORDER),
        _source=frame["source"].astype(str).map(lambda s: SOURCE_ORDER.index(s) if s in SOURCE_ORDER else 99),
    )
    ranked = ranked.sort_values(["_source", "adapter", "model", "_rank", "case_id"], kind="stable")
    groups = []
    for key, group in ranked.groupby(["source", "adapter", "model"], sort=False, observed=True):
        source, adapter, model = (str(part) for part in key)
        groups.append(((source, adapter, model), group.drop(columns=["_rank", "_source"])))
    return groups


def verdicts(frame: pd.DataFrame) -> pd.Series:
    """`verdict_of` for every row at once (a run may hold a million episodes)."""
    kind = frame["error_kind"]
    error = kind.notna() & (kind.astype(str) != "")
    chosen = np.select(
        [
            error.to_numpy(),
            frame["correct"].eq(True).to_numpy(),
            frame["malformed"].astype(bool).to_numpy(),
            frame["correct"].isna().to_numpy(),
        ],
        ["error", "correct", "malformed", "unlabelled"],
        "incorrect",
    )
    return pd.Series(chosen, index=frame.index, dtype=object)


def shown_keys(frame: pd.DataFrame, max_per_group: int | None = DEFAULT_MAX_PER_GROUP) -> list[EpisodeKey]:
    """The episodes the view shows: every group's first `max_per_group` (failures first)."""
    keys: list[EpisodeKey] = []
    for _, group in ordered_groups(frame):
        part = group if max_per_group is None else group.head(max_per_group)
        keys += [
            (str(c), str(a), str(m))
            for c, a, m in zip(part["case_id"], part["adapter"], part["model"], strict=True)
        ]
    return keys


def episodes_html(
    frame: pd.DataFrame,
    details: Mapping[EpisodeKey, EpisodeDetail],
    cases: Mapping[str, Case] | None,
    *,
    max_per_group: int | None = DEFAULT_MAX_PER_GROUP,
    case_set: str = "",
) -> str:
    """The per-episode view: the filter bar, one `<details>` group per source, adapter and model,
    and the list of the cases the shown episodes played."""
    cases = cases or {}
    groups_html = []
    used: dict[str, Case] = {}
    for (source, adapter, model), group in ordered_groups(frame):
        # only the rows shown become dicts: a group can hold many thousand episodes
        shown = (group if max_per_group is None else group.head(max_per_group)).to_dict("records")
        correct = int((group["verdict"] == "correct").sum())
        items = []
        for record in shown:
            key = (str(record["case_id"]), adapter, model)
            case = cases.get(key[0])
            if case is not None:
                used[case.id] = case
            items.append(episode_html(record, details.get(key), case_known=case is not None))
        hidden = len(group) - len(shown)
        failures = len(group) - correct
        hidden_failures = failures - sum(1 for r in shown if r["verdict"] != "correct")
        more = (
            f'<p class="more">{hidden} more episodes of this group are not shown ({hidden_failures} of them '
            f"not correct): the page keeps {max_per_group} per group, failures first; the results file has "
            "them all.</p>"
            if hidden
            else ""
        )
        summary = (
            f"{source_badge(source)} <b>{_t(row_label(adapter, model, source))}</b> "
            f"{correct}/{len(group)} correct, {failures} not"
        )
        groups_html.append(
            f'<details class="ep-group" data-source="{escape(source)}"><summary>{summary} '
            f'<span class="shown"></span></summary><p class="note">{_t(source_caption(source))}</p>'
            f"{''.join(items)}{more}</details>"
        )
    if not groups_html:
        return "<p>No episodes in this run.</p>"
    sources = list(dict.fromkeys(str(s) for s in frame["source"]))
    options = "".join(f'<option value="{escape(s)}">{_t(s)}</option>' for s in sources)
    filters = (
        '<div class="filters" id="ep-filters">'
        '<input type="search" id="ep-search" '
        'placeholder="filter: case id, tool, argument, reason, message text"> '
        '<select id="ep-verdict"><option value="">every verdict</option>'
        '<option value="failures">failures only</option><option value="correct">correct only</option>'
        "</select> "
        f'<select id="ep-source"><option value="">every source</option>{options}</select> '
        '<span id="ep-count"></span></div>'
    )
    missing = (
        ""
        if cases
        else (
            f'<p class="note">The case set{" " + _t(case_set) if case_set else ""} could not be read: '
            "episodes are shown without their messages.</p>"
        )
    )
    case_list = "".join(case_html(used[case_id]) for case_id in sorted(used))
    cases_section = (
        (
            f'<h3 id="cases">Cases ({len(used)})</h3><p class="note">The messages and expected calls '
            f"of every case shown above{' (case set ' + _t(case_set) + ')' if case_set else ''}."
            f"</p>{case_list}"
        )
        if used
        else ""
    )
    return f'{filters}{missing}<div id="ep-groups">{"".join(groups_html)}</div>{cases_section}'
