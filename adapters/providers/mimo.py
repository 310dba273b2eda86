"""Xiaomi MiMo: the openai-chat contract at its own base URL and key."""

from __future__ import annotations

from xpeval.adapters.providers._spec import Provider
from xpeval.adapters.providers.openai import OPENAI_LOGGERS

MIMO = Provider(
    name="mimo",
    default_model="mimo-v2-flash",
    key_vars=("MIMO_API_KEY",),
    base_url_var="MIMO_BASE_URL",
    default_base_url="https://api.xiaomimimo.com/v1",
    sdk_loggers=OPENAI_LOGGERS,
)
