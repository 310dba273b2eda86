"""The HTML report: one self-contained file (inline CSS, inline SVG charts, one small inline
script for the episode filter; nothing fetched), built from a run's tables.

    run = load_run(Path("reports/results.jsonl"))
    write_report(Path("reports/report.html"), run, pairs=pd.read_csv("reports/schema_acceptance.csv"))

Every number on the page stands next to its source: the scorecard is one table per source with
that source's note, every chart is drawn for one source and titled with it (`xpeval.evals.report.plots`),
and emulated rows say "pipeline only" wherever they appear.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from html import escape
from pathlib import Path

import pandas as pd

from xpeval.errors import UserError
from xpeval.evals.acceptance.outcomes import OUTCOME_LABELS, SCHEMA_OUTCOMES, outcome_legend
from xpeval.evals.acceptance.table import MEASURED_COLUMNS, PROVENANCE, summary
from xpeval.evals.cases import Case
from xpeval.evals.report.episodes import DEFAULT_MAX_PER_GROUP, episodes_html, read_details, shown_keys
from xpeval.evals.report.plots import (
    Chart,
    accuracy_charts,
    category_charts,
    history_charts,
    latency_charts,
    latency_note,
    schema_chart,
    source_badge,
    source_caption,
)
from xpeval.evals.report.vendors import vendor_html
from xpeval.evals.results.load import LoadedRun
from xpeval.evals.verdict.scorecard import RATES, SOURCE_ORDER, by_category, scorecard

BUILTIN_CASE_SET = "builtin"
"""The case-set label of the built-in cases in a run's header (`xpeval.evals.running.suite`)."""


def run_cases(
    run: LoadedRun, root: Path | None = None, case_dir: Path | None = None
) -> tuple[list[Case], str]:
    """The project's case set (`case_dir`, else the project's `[tool.xpeval]` cases, else the
    built-in ones; never a folder the run's header names) and its label; UserError when they
    cannot be read or hold a case the run's header records with other content (a case they do
    not hold is shown as not in the case set)."""
    from xpeval.evals.results.evidence import check_case_set, project_case_set

    if root is None:
        from xpeval.evals.project import project_settings

        root = project_settings().root
    case_set = project_case_set(root, case_dir)
    check_case_set(run.path, run.header, case_set, absent_ok=True)
    return list(case_set.cases.values()), case_set.label


def _pct(value: object, low: object, high: object) -> str:
    if not isinstance(value, float) or math.isnan(value):
        return "-"
    return f"{value:.0%} <small>[{low:.0%}, {high:.0%}]</small>"


def _seconds(value: object) -> str:
    return "-" if not isinstance(value, float) or math.isnan(value) else f"{value:.3f}"


def scorecard_html(card: pd.DataFrame) -> str:
    """The scorecard as one table per source, each under its source's note."""
    parts = []
    headers = ["adapter", "model", "n", *(r.replace("_", " ") for r in RATES), "p50 s", "p95 s", "recorded"]
    for source in [*SOURCE_ORDER, *sorted(set(card["source"].astype(str)) - set(SOURCE_ORDER))]:
        part = card[card["source"].astype(str) == source]
        if part.empty:
            continue
        rows = []
        for record in part.to_dict("records"):
            cells = [escape(str(record["adapter"])), escape(str(record["model"])), str(record["n"])]
            cells += [_pct(record[m], record[f"{m}_lo"], record[f"{m}_hi"]) for m in RATES]
            cells += [
                _seconds(record["latency_p50_s"]),
                _seconds(record["latency_p95_s"]),
                escape(str(record.get("recorded") or "-")),
            ]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        head = "".join(f"<th>{h}</th>" for h in headers)
        parts.append(
            f'<div class="card" data-source="{escape(source)}"><h3>{source_badge(source)}</h3>'
            f'<p class="note">{escape(source_caption(source))}</p>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        )
    return "".join(parts) or "<p>No episodes.</p>"


def _charts(charts: list[Chart], empty: str) -> str:
    return "".join(chart.html() for chart in charts) if charts else f'<p class="note">{escape(empty)}</p>'


def _schema_section(pairs: pd.DataFrame | None) -> str:
    chart = schema_chart(pairs)
    if chart is None or pairs is None:
        return (
            '<p class="note">No schema-acceptance table given: run <code>xpeval schemas</code> (or '
            "<code>xpeval run --schema-report</code>) to write reports/schema_acceptance.csv.</p>"
        )
    provenance = re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(PROVENANCE))  # its Markdown code spans
    return f'<p class="note">{_schema_origin(pairs)}</p><p class="note">{provenance}</p>{chart.html()}' + (
        _outcome_table(pairs)
    )


def _schema_origin(pairs: pd.DataFrame) -> str:
    """Which tools the section shows and which command measured them (the csv's own columns)."""
    tools, adapters = int(pairs["schema"].nunique()), int(pairs["adapter"].nunique())
    shown = f"{tools} tools x {adapters} adapters"
    if not set(MEASURED_COLUMNS) <= set(pairs.columns) or pairs.empty:
        return (
            f"{shown}; the table does not say which tools or which command: it was written before "
            "xpeval recorded that (run <code>xpeval schemas</code> again)."
        )
    first = pairs.iloc[0]
    return (
        f"{shown}, the tools from <code>{escape(str(first['tools_from']))}</code>, measured by "
        f"<code>{escape(str(first['measured_by']))}</code>."
    )


def _outcome_table(pairs: pd.DataFrame) -> str:
    """Tools per adapter by outcome, in the words and counts of `xpeval schemas`'s own table."""
    needed = {"verdict", "violations", "validation_lost", "guidance_lost", "losses", "loss_rate"}
    if not needed <= set(pairs.columns):
        return ""
    table = summary(pairs)
    columns = ["adapter", "pairs", *(outcome.column for outcome in SCHEMA_OUTCOMES)]
    head = "".join(f"<th>{escape({'pairs': 'tools', **OUTCOME_LABELS}.get(c, c))}</th>" for c in columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{escape(str(record[c]))}</td>" for c in columns) + "</tr>"
        for record in table.to_dict("records")
    )
    return (
        f'<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table><p class="note">'
        f"{escape(outcome_legend())}</p>"
    )


def _run_summary(run: LoadedRun) -> str:
    header, frame = run.header, run.frame
    config = header.config
    plan = header.plan
    planned = sum(len(plan.cases_of(a)) * len(m) for a, m in plan.models.items()) if plan else None
    status = "complete" if run.complete else "INCOMPLETE: the run did not finish"
    if run.complete and planned is not None and len(frame) < planned:
        status = "INCOMPLETE: some planned episodes have no result"
    counts = frame["source"].astype(str).value_counts()
    sources = ", ".join(f"{source_badge(s)} {counts[s]} episodes" for s in SOURCE_ORDER if s in counts)
    items = [
        ("run", escape(header.run)),
        ("started", escape(header.started_at)),
        ("mode", escape(str(config.get("mode", "?")))),
        ("case set", escape(str(config.get("case_set", BUILTIN_CASE_SET)))),
        ("episodes", f"{len(frame)}" + (f" of {planned} planned" if planned is not None else "")),
        ("status", escape(status)),
        ("sources", sources or "-"),
    ]
    lines = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in items)
    banner = ""
    if "emulated" in counts:
        banner = (
            f'<p class="banner">{counts["emulated"]} episodes are EMULATED: a perfect model answered '
            "them through the adapter's real request and decode path. They check the pipeline only "
            "and say nothing about any provider's quality; every chart and table marks them.</p>"
        )
    if not run.complete or status.startswith("INCOMPLETE"):
        banner += f'<p class="banner">{escape(status)}: the numbers below cover only the episodes done.</p>'
    return f'<dl class="run">{lines}</dl>{banner}'


def _check_sources(run: LoadedRun) -> None:
    """UserError unless every episode's source is one the page knows how to label: a row of
    another source (a hand-edited file, another tool's) would fall out of the scorecard while
    still counted in the episodes, and every number stands next to its source."""
    sources = run.frame["source"].astype(str)
    unknown = sources[~sources.isin(SOURCE_ORDER)]
    if not unknown.empty:
        shown = ", ".join(repr(s) for s in sorted(set(unknown))[:3])
        raise UserError(
            f"{run.path}: {len(unknown)} episodes of a source xpeval does not know ({shown}; known: "
            f"{', '.join(SOURCE_ORDER)}): not a results file this report can show"
        )


def report_html(
    run: LoadedRun,
    *,
    pairs: pd.DataFrame | None = None,
    history: pd.DataFrame | None = None,
    cases: Iterable[Case] | None = None,
    max_per_group: int | None = DEFAULT_MAX_PER_GROUP,
    title: str = "xpeval report",
    vendors: pd.DataFrame | None = None,
) -> str:
    """The whole page. `pairs`: the schema-acceptance pairs (`pairs_frame`, or its csv read
    back); `history`: the trend frame (`xpeval.evals.report.plots.TREND_COLUMNS`); `cases`: the case set
    (default: the one the run's header names, `run_cases`); `vendors`: the rows against a reference
    (`xpeval.evals.report.vendors.vendor_frame`)."""
    frame = run.frame
    _check_sources(run)
    card, categories = scorecard(frame), by_category(frame)
    case_set = str(run.header.config.get("case_set") or BUILTIN_CASE_SET)
    if cases is None:
        try:
            cases, case_set = run_cases(run)
        except UserError:
            cases = []
    by_id = {case.id: case for case in cases}
    details = read_details(run.path, shown_keys(frame, max_per_group))
    note = latency_note(frame)
    history_part = (
        _charts(history_charts(history), "The history holds no accuracy rows.")
        if history is not None
        else '<p class="note">No history given (<code>xpeval report --history PATH</code>: a Parquet file or '
        "folder of the trend frame).</p>"
    )
    sections = [
        ("run", "This run", _run_summary(run)),
        (
            "scorecard",
            "Scorecard",
            '<p class="note">Rates with Wilson 95 % intervals, one table per source. '
            "p50/p95: seconds per episode answered in this run (a replayed episode has none).</p>"
            + scorecard_html(card),
        ),
        *(
            [("vendors", "Against the reference", vendor_html(vendors))]
            if vendors is not None and not vendors.empty
            else []
        ),
        ("accuracy", "Accuracy per adapter and model", _charts(accuracy_charts(card), "No episodes.")),
        ("categories", "Accuracy per category", _charts(category_charts(categories), "No episodes.")),
        ("schemas", "Schema acceptance", _schema_section(pairs)),
        (
            "latency",
            "Latency",
            (f'<p class="note">{escape(note)}</p>' if note else "")
            + "".join(chart.html() for chart in latency_charts(frame)),
        ),
        ("history", "History", history_part),
        (
            "episodes",
            "Episodes",
            '<p class="note">Every episode with its case, the calls the model made, its '
            "verdict and the reason; per source, adapter and model, failures first. Open a group, then an "
            "episode; the filter searches the case messages too.</p>"
            + episodes_html(frame, details, by_id, max_per_group=max_per_group, case_set=case_set),
        ),
    ]
    nav = " · ".join(f'<a href="#{anchor}">{escape(name)}</a>' for anchor, name, _ in sections)
    body = "".join(
        f'<section id="{anchor}"><h2>{escape(name)}</h2>{content}</section>'
        for anchor, name, content in sections
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        f'content="width=device-width, initial-scale=1"><title>{escape(title)}</title><style>{CSS}</style>'
        f"</head><body><header><h1>{escape(title)}</h1><nav>{nav}</nav></header><main>{body}</main>"
        f"<script>{SCRIPT}</script></body></html>"
    )


def write_report(
    out: Path,
    run: LoadedRun,
    *,
    pairs: pd.DataFrame | None = None,
    history: pd.DataFrame | None = None,
    cases: Iterable[Case] | None = None,
    max_per_group: int | None = DEFAULT_MAX_PER_GROUP,
    title: str = "xpeval report",
    vendors: pd.DataFrame | None = None,
) -> Path:
    """`report_html(...)` written to `out` (its folder made as needed)."""
    page = report_html(
        run,
        pairs=pairs,
        history=history,
        cases=cases,
        max_per_group=max_per_group,
        title=title,
        vendors=vendors,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1b1b1b;
background:#fff;line-height:1.4}
header{padding:12px 24px;border-bottom:1px solid #ddd;position:sticky;top:0;background:#fff;z-index:2}
h1{margin:0 0 4px;font-size:1.4em}nav a{color:#0b57a4}main{padding:0 24px 48px;max-width:1500px}
h2{margin-top:32px;border-bottom:1px solid #eee}h3{margin:18px 0 4px}h5{margin:8px 0 2px}
.note{color:#444;font-size:.92em}.banner{background:#fff4e0;border:1px solid #e6a700;padding:8px 12px}
dl.run{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}dt{font-weight:600}dd{margin:0}
table{border-collapse:collapse;font-size:.85em;margin:6px 0 12px}td,th{border:1px solid #ddd;padding:3px 6px;
text-align:left;vertical-align:top}th{background:#f5f5f5}
.xpeval-source{display:inline-block;border:2px solid;border-radius:4px;padding:0 6px;font-size:.85em;
font-weight:600}.xpeval-source[data-source=emulated]{background:repeating-linear-gradient(45deg,#eee,#eee 4px,
#fff 4px,#fff 8px)}
figure.xpeval-figure{margin:12px 0 24px}figcaption{font-size:.9em;color:#333;margin-top:4px}
.filters{position:sticky;top:64px;background:#fff;padding:6px 0;z-index:1}#ep-search{width:28em;padding:4px}
details{margin:2px 0}details.ep-group{border:1px solid #ddd;padding:4px 8px;margin:6px 0}
details.ep{border-left:3px solid #ccc;padding-left:6px}details.ep[data-verdict=correct]{border-color:#009E73}
details.ep[data-verdict=incorrect]{border-color:#D55E00}details.ep[data-verdict=error]{border-color:#7a0000}
details.ep[data-verdict=malformed]{border-color:#CC79A7}summary{cursor:pointer}
.v{font-weight:600;font-size:.85em}.v-correct{color:#006b4f}.v-incorrect{color:#b34700}.v-error{color:#7a0000}
.v-malformed{color:#a0407a}.cat,.origin{color:#666;font-size:.85em}.reason{color:#333;font-size:.9em}
.ep-body{padding:4px 0 8px 12px;font-size:.92em}
.ep-case{background:#fafafa;border:1px dashed #ddd;padding:4px}
.msg{margin:2px 0;white-space:pre-wrap}.msg b{display:inline-block;min-width:5em;color:#555}
.expected{color:#224}.parse-error{color:#a00}.meta{color:#666;font-size:.85em}.more{font-style:italic}
code{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.92em;word-break:break-word}
.hidden{display:none}
"""

SCRIPT = """
(function(){
  var groups = document.getElementById('ep-groups');
  if (!groups) return;
  function caseBody(id){
    var c=document.getElementById('case-'+id); return c?c.querySelector('.case-body'):null;
  }
  // A case's messages are written once (the case list) and copied into an episode when opened.
  function fill(d){
    var slot=d.querySelector('.ep-case'); if(!slot||slot.dataset.filled) return;
    var body=caseBody(d.dataset.case); if(!body) return;
    slot.innerHTML=body.innerHTML; slot.dataset.filled='1';
  }
  document.addEventListener('toggle', function(e){
    var d=e.target; if(d.classList&&d.classList.contains('ep')&&d.open) fill(d);
  }, true);
  groups.querySelectorAll('details.ep[open]').forEach(fill);
  var caseText={};
  function textOf(id){if(!(id in caseText)){var b=caseBody(id);caseText[id]=b?b.textContent.toLowerCase():'';}
    return caseText[id];}
  var search=document.getElementById('ep-search'), verdict=document.getElementById('ep-verdict'),
      source=document.getElementById('ep-source'), count=document.getElementById('ep-count');
  function apply(){
    var words=search.value.toLowerCase().split(/\\s+/).filter(Boolean), v=verdict.value, s=source.value,
        shown=0, total=0, filtering=words.length>0||v!=='';
    groups.querySelectorAll('details.ep-group').forEach(function(g){
      var inGroup=0, sourceOk=!s||g.dataset.source===s;
      g.querySelectorAll('details.ep').forEach(function(ep){
        total++;
        var ok=sourceOk&&(!v||(v==='correct')===(ep.dataset.verdict==='correct'));
        if(ok&&words.length){var t=ep.textContent.toLowerCase()+' '+textOf(ep.dataset.case);
          ok=words.every(function(w){return t.indexOf(w)>=0;});}
        ep.classList.toggle('hidden',!ok); if(ok){inGroup++;shown++;}
      });
      g.classList.toggle('hidden',inGroup===0);
      g.querySelector('.shown').textContent=filtering||s?('('+inGroup+' match)'):'';
      if(filtering&&inGroup>0) g.open=true;
    });
    count.textContent=shown+' of '+total+' episodes shown';
  }
  // A link can carry a filter: report.html?filter=vienna&verdict=failures&source=live
  var query=new URLSearchParams(location.search);
  search.value=query.get('filter')||''; verdict.value=query.get('verdict')||'';
  source.value=query.get('source')||'';
  [search,verdict,source].forEach(function(el){el.addEventListener('input',apply);});
  apply();
})();
"""
