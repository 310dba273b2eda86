"""The registry-derived conformance suite, shipped as a pytest plugin
(`xpeval.evals.conformance.pytest_plugin`).

`pytest --xpeval-conformance` in any project collects these modules: every registered adapter,
plugins of other packages included, runs every check written here once (parametrized by
`adapter_id`), plus a replay of the project's own cassettes for it. A new registry entry gets
the whole suite without a test file of its own.
"""
