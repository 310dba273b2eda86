"""The provider boundary: the adapter registry, the canonical contract, provider data.

    from adapters import create_adapter, AdapterSettings, TurnRequest, UserMessage
    adapter = create_adapter("openai-chat", AdapterSettings(model="gpt-4.1-mini"))
    result = await adapter.turn(TurnRequest(model="gpt-4.1-mini", messages=[UserMessage(content="hi")]))

Names are imported when first used, so `import adapters` stays cheap (no SDK is imported).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Adapter": "adapters.adapter",
    "AdapterSettings": "adapters.adapter",
    "Capabilities": "adapters.adapter",
    "EffectiveContract": "adapters.adapter",
    "ADAPTER_REGISTRY": "adapters.registry",
    "DirectEntry": "adapters.registry",
    "WrapperEntry": "adapters.registry",
    "RegistryError": "adapters.registry",
    "UnknownAdapterError": "adapters.registry",
    "adapter_ids": "adapters.registry",
    "create_adapter": "adapters.registry",
    "effective_contract": "adapters.registry",
    "get_entry": "adapters.registry",
    "register_adapter": "adapters.registry",
    "Provider": "adapters.providers._spec",
    "AssistantMessage": "adapters.contract",
    "ForceTool": "adapters.contract",
    "Message": "adapters.contract",
    "ProviderError": "adapters.contract",
    "SystemMessage": "adapters.contract",
    "ToolCall": "adapters.contract",
    "ToolResultMessage": "adapters.contract",
    "ToolSpec": "adapters.contract",
    "TurnRequest": "adapters.contract",
    "TurnResult": "adapters.contract",
    "UserMessage": "adapters.contract",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from adapters.adapter import Adapter, AdapterSettings, Capabilities, EffectiveContract
    from adapters.contract import (
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
    from adapters.providers._spec import Provider
    from adapters.registry import (
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
        raise AttributeError(f"module 'adapters' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
