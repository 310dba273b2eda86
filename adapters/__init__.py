"""The provider boundary: the adapter registry, the canonical contract, provider data.

    from xpeval.adapters import create_adapter, AdapterSettings, TurnRequest, UserMessage
    adapter = create_adapter("openai-chat", AdapterSettings(model="gpt-4.1-mini"))
    result = await adapter.turn(TurnRequest(model="gpt-4.1-mini", messages=[UserMessage(content="hi")]))

Names are imported when first used, so `import adapters` stays cheap (no SDK is imported).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Adapter": "xpeval.adapters.adapter",
    "AdapterSettings": "xpeval.adapters.adapter",
    "Capabilities": "xpeval.adapters.adapter",
    "EffectiveContract": "xpeval.adapters.adapter",
    "ADAPTER_REGISTRY": "xpeval.adapters.registry",
    "DirectEntry": "xpeval.adapters.registry",
    "WrapperEntry": "xpeval.adapters.registry",
    "RegistryError": "xpeval.adapters.registry",
    "UnknownAdapterError": "xpeval.adapters.registry",
    "adapter_ids": "xpeval.adapters.registry",
    "create_adapter": "xpeval.adapters.registry",
    "effective_contract": "xpeval.adapters.registry",
    "get_entry": "xpeval.adapters.registry",
    "register_adapter": "xpeval.adapters.registry",
    "Provider": "xpeval.adapters.providers._spec",
    "connection_pool": "xpeval.adapters.providers._http",
    "AssistantMessage": "xpeval.adapters.contract",
    "ForceTool": "xpeval.adapters.contract",
    "Message": "xpeval.adapters.contract",
    "ProviderError": "xpeval.adapters.contract",
    "SystemMessage": "xpeval.adapters.contract",
    "ToolCall": "xpeval.adapters.contract",
    "ToolResultMessage": "xpeval.adapters.contract",
    "ToolSpec": "xpeval.adapters.contract",
    "TurnRequest": "xpeval.adapters.contract",
    "TurnResult": "xpeval.adapters.contract",
    "UserMessage": "xpeval.adapters.contract",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from xpeval.adapters.adapter import Adapter, AdapterSettings, Capabilities, EffectiveContract
    from xpeval.adapters.contract import (
        AssistantMessage,
        ForceTool,
        Message,
        ProviderError,
        SystemMessage,
        ToolCall,
        ToolResultMessage,
        ToolSpec,
        TurnRequest,
        TurnResult,
        UserMessage,
    )
    from xpeval.adapters.providers._http import connection_pool
    from xpeval.adapters.providers._spec import Provider
    from xpeval.adapters.registry import (
        ADAPTER_REGISTRY,
        DirectEntry,
        RegistryError,
        UnknownAdapterError,
        WrapperEntry,
        adapter_ids,
        create_adapter,
        effective_contract,
        get_entry,
        register_adapter,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'xpeval.adapters' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
