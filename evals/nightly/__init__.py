"""The nightly cross-provider eval (docs/nightly.md), one module per job:

- `config`: what a nightly is (`NightlyConfig`: its own choices around the shared run settings);
- `servers`: the local model servers it may start and stop;
- `plan`: each adapter's target tonight, or why it is skipped;
- `schema_probes`: live schema acceptance, next to the offline checker's prediction;
- `alerts`: why it fails, from the gate's reports and the live schema answers;
- `outcome`: what it produced, and the summary it prints and writes;
- `run`: `run_nightly(NightlyConfig(...))`, the pipeline.
"""
