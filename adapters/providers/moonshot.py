"""Moonshot / Kimi: the openai-chat contract at api.moonshot.ai (schema dialect set in the registry)."""

from __future__ import annotations

from xpeval.adapters.providers._spec import Provider
from xpeval.adapters.providers.openai import OPENAI_LOGGERS

MOONSHOT = Provider(
    name="moonshot",
    default_model="kimi-k2-0905-preview",
    key_vars=("MOONSHOT_API_KEY",),
    base_url_var="MOONSHOT_BASE_URL",
    default_base_url="https://api.moonshot.ai/v1",
    sdk_loggers=OPENAI_LOGGERS,
    price_provider="moonshotai",
)
