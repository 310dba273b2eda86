"""Wires xpeval ships that are written as plugins are: against `xpeval.plugin` only, registered
through the same validation (`adapters/wires/catalog.py`, `BUNDLED_WIRES`)."""
