"""Everything that measures, grouped by stage (docs/ARCHITECTURE.md): `running`, `results`,
`verdict`, `nightly`, `acceptance` (schema acceptance), `cassettes`, `conformance`, and the
parts they share (`cases`, `emulator`, `local_model`, `runtime`, `report`, the CLI).

The public API is the package `xpeval` itself (`from xpeval import run_suite, SuiteConfig`)."""
