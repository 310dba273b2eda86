"""Everything that measures: cases, runtime, scoring, runner, scorecards, cassettes, CLI."""
