"""`python -m xpeval ...` is `xpeval ...`."""

from xpeval.evals.cli import console_main

raise SystemExit(console_main())
