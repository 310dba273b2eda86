"""`xpeval run --batch`: single-turn episodes asked through the providers' Batch APIs, durably
(docs/batch.md). `capture.py` turns an episode into its batch request, `groups.py` splits them at
each API's limits, `session.py` submits, finds again after a crash, polls and answers."""
