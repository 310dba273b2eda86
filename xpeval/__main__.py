"""`python -m xpeval ...` is `xpeval ...`."""

from xpeval.evals.cli import main

raise SystemExit(main())
