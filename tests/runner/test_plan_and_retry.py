"""Episode planning (filters, sharding, models) and retry timing."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from xpeval.adapters.contract import ProviderError
from xpeval.errors import UnknownAdapterError, UserError
from xpeval.evals.cases import load_cases
from xpeval.evals.results.run_plan import Shard
from xpeval.evals.running.plan import parse_models, plan, select_cases
from xpeval.evals.running.retry import backoff_delay

CASES = [loaded.case for loaded in load_cases()]


def test_shards_partition_the_episodes_exactly() -> None:
    adapters = ["openai-chat", "mimo", "vertex-ai"]
    models = parse_models([], adapters)
    everything = {(e.case.id, e.adapter_id) for e in plan(CASES, adapters, models, None)}
    parts = [
        {(e.case.id, e.adapter_id) for e in plan(CASES, adapters, models, Shard(i, 3))} for i in (1, 2, 3)
    ]
    assert set().union(*parts) == everything
    assert sum(len(p) for p in parts) == len(everything)
    assert all(parts), "every shard gets work"


@pytest.mark.parametrize("bad", ["0/2", "3/2", "x", "1-2", "1/0"])
def test_bad_shard_specs_are_clear_errors(bad: str) -> None:
    with pytest.raises(UserError, match="--shard"):
        Shard.parse(bad)


def test_case_filters_by_glob_and_category() -> None:
    chosen = select_cases(CASES, ["weather_*"], ["simple"])
    assert chosen and all(c.id.startswith("weather_") and c.category == "simple" for c in chosen)
    with pytest.raises(UserError):
        select_cases(CASES, ["no-such-case"], [])


def test_models_apply_to_all_or_to_one_adapter() -> None:
    models = parse_models(["m1", "mimo=m2"], ["openai-chat", "mimo"])
    assert models == {"openai-chat": ["m1"], "mimo": ["m1", "m2"]}
    with pytest.raises(UnknownAdapterError):
        parse_models(["nope=m"], ["openai-chat"])


def test_retry_after_wins_over_backoff() -> None:
    error = ProviderError(status=429, message="slow", retry_after=7)
    assert backoff_delay(1, error) == 7
    assert backoff_delay(1, error.model_copy(update={"retry_after": 999}), cap=60) == 60


def test_backoff_grows_exponentially_with_full_jitter() -> None:
    rng = random.Random(1)
    for attempt in range(1, 8):
        delays = [backoff_delay(attempt, None, base=1, cap=30, rng=rng) for _ in range(200)]
        assert max(delays) <= min(30, 2 ** (attempt - 1))
        assert min(delays) >= 0


def test_a_run_against_providers_without_credentials_stops_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from xpeval.evals.cli import main

    results = tmp_path / "results.jsonl"
    code = main(
        [
            "run",
            "--mode",
            "live",
            "--target",
            "provider",
            "--adapters",
            "openai-chat,mimo",
            "--results",
            str(results),
            "--reports",
            str(tmp_path / "reports"),
            "--no-progress",
        ]
    )
    assert code == 2
    assert "no credentials for openai-chat, mimo" in capsys.readouterr().err
    assert not results.exists(), "nothing was run, so nothing is recorded"
