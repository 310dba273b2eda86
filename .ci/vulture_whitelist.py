"""Names vulture reports as unused that are used, each group with why (read by `.ci/run`).

vulture sees only direct calls: what frameworks call by name, and data fields read from
outside Python, look unused to it.
"""

# ruff: noqa
_ = None

# pydantic reads `model_config`; results, scores and walk nodes are data (JSON lines, tables,
# reports), read by users and notebooks rather than by name in this code.
_.model_config
_.error_status
_.started_at
_.finished_at
_.actual_calls
_.via
# jsonschema calls a validator's `evolve` on every descent (evals/acceptance/checker/meta.py sets its own).
_.evolve
# pydantic validators and serializers run by decorator.
_._default_severity
_._calls_agree_with_no_call
_._consistent
_._matches_schema
_._nested_shape
_._known_classes
_._without_unset_adapter
_._without_unset_any_call
_._without_unset_task
_._aligned
_._plain_utterances
_._non_blank
# vcrpy's Cassette and persister interfaces, overridden and called by vcrpy.
_._metadata
_._old_interactions
_.can_play_response_for
_.play_response
_.save_cassette
# http.server and socketserver hooks and switches, called or read by the standard library.
_.close_connection
_.do_GET
_.do_POST
_.do_PUT  # S3 object uploads to the emulator (Bedrock batch inference)
_.log_message
_.daemon_threads
_.protocol_version
_.request_queue_size
# io.RawIOBase and httpx2 transport interfaces, called by io / httpx2.
_.readable
_.handle_request
# rich reads table column settings.
_.no_wrap
# PEP 562 lazy exports of the packages' public names.
__getattr__
# pytest hooks and fixtures, called by pytest (the plugin ships them to any project).
pytest_addoption
pytest_collection_modifyitems  # tests/conftest.py: the run order under -n
pytest_configure
pytest_generate_tests
pytest_runtest_makereport
pytest_terminal_summary  # tests/conftest.py: how many documented commands ran and were skipped
xpeval_cassette
xpeval_cassette_mode
xpeval_cassette_store
xpeval_adapter
pytestmark
include_items
# hypothesis' RuleBasedStateMachine runs rules, invariants and teardown by decorator.
_.a_returned_log_edited_by_the_caller_changes_nothing
_.advance_clock
_.audit_holds_every_attempt_in_order
_.decide_a_live_request
_.decide_a_spent_or_never_issued_request
_.pending_matches_the_model
_.teardown
_.the_sink_holds_every_row
# Parameters a signature must have: the cache key of lru_cache (file mtimes), a signal
# handler's signal number.
mtime_ns
signum
# pytest fixtures requested by parameter name (or autouse), never called directly.
_.lagging
_._elsewhere
_._key_registered
# logging.LogRecord's cached traceback text, read by logging.Formatter (cleared by SecretLogFilter).
_.exc_text
# html.parser.HTMLParser hooks, called by the parser.
_.handle_starttag
_.handle_endtag
_.handle_data
# The plugin API (xpeval/plugin.py) exports by name what plugins and xpeval/bundled/ use.
_.http_transport
# rich Column attributes set for rich to read when it renders (evals/commands/_tables.py).
_.min_width
# The plugin API's names exported under another name than their module's, for type checkers
# (xpeval/plugin.py's TYPE_CHECKING block; at run time `__getattr__` serves them).
SchemaRules
OpenAISchemaRules
AnthropicSchemaRules
# The bundled wires and adapters, named by "module:NAME" strings (adapters/wires/catalog.py,
# adapters/registry.py), as a plugin's entry point names its own.
MISTRAL_WIRE
COHERE_WIRE
COHERE
BEDROCK_WIRE
BEDROCK
# mistralai's SDK calls its synchronous client's build_request (xpeval/bundled/mistral_chat.py
# refuses it there).
_.build_request
# The retail store's tools, called by name as a model calls them (evals/runtime/environment.py).
_.find_user_id_by_email
_.find_user_id_by_name_zip
_.get_user_details
_.get_order_details
_.get_product_details
_.list_all_product_types
_.calculate
_.transfer_to_human_agents
_.cancel_pending_order
_.modify_pending_order_address
_.return_delivered_order_items
_.exchange_delivered_order_items
# bfcl-eval's model table as its AST checker reads it (tests/cases/test_bfcl_ast_parity.py
# replaces the table, whose import pulls in every provider SDK).
_.underscore_to_dot
_.MODEL_CONFIG_MAPPING
