"""The provider boundary: the adapter registry, the canonical contract, provider data.

    from xpeval.adapters import create_adapter, AdapterSettings, TurnRequest, UserMessage
    adapter = create_adapter("openai-chat", AdapterSettings(model="gpt-4.1-mini"))
    result = await adapter.turn(TurnRequest(model="gpt-4.1-mini", messages=[UserMessage(content="hi")]))

Names are imported when first used, so `import adapters` stays cheap (no SDK is imported).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "Adapter": "xpeval.adapters.adapter",
    "AdapterSettings": "xpeval.adapters.adapter",
    "Capabilities": "xpeval.adapters.adapter",
    "EffectiveContract": "xpeval.adapters.adapter",
    "ADAPTER_REGISTRY": "xpeval.adapters.registry",
    "DirectEntry": "xpeval.adapters.registry",
    "WrapperEntry": "xpeval.adapters.registry",
    "RegistryError": "xpeval.errors",
    "UnknownAdapterError": "xpeval.errors",
    "adapter_ids": "xpeval.adapters.registry",
    "create_adapter": "xpeval.adapters.registry",
    "effective_contract": "xpeval.adapters.registry",
    "ensure_loaded": "xpeval.adapters.registry",
    "get_entry": "xpeval.adapters.registry",
    "register_adapter": "xpeval.adapters.registry",
    "refused_plugins": "xpeval.adapters.plugins",
    "RefusedPlugin": "xpeval.adapters.plugins",
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.adapters.adapter import Adapter as Adapter
    from xpeval.adapters.adapter import AdapterSettings as AdapterSettings
    from xpeval.adapters.adapter import Capabilities as Capabilities
    from xpeval.adapters.adapter import EffectiveContract as EffectiveContract
    from xpeval.adapters.contract import AssistantMessage as AssistantMessage
    from xpeval.adapters.contract import ForceTool as ForceTool
    from xpeval.adapters.contract import Message as Message
    from xpeval.adapters.contract import ProviderError as ProviderError
    from xpeval.adapters.contract import SystemMessage as SystemMessage
    from xpeval.adapters.contract import ToolCall as ToolCall
    from xpeval.adapters.contract import ToolResultMessage as ToolResultMessage
    from xpeval.adapters.contract import ToolSpec as ToolSpec
    from xpeval.adapters.contract import TurnRequest as TurnRequest
    from xpeval.adapters.contract import TurnResult as TurnResult
    from xpeval.adapters.contract import UserMessage as UserMessage
    from xpeval.adapters.plugins import RefusedPlugin as RefusedPlugin
    from xpeval.adapters.plugins import refused_plugins as refused_plugins
    from xpeval.adapters.providers._http import connection_pool as connection_pool
    from xpeval.adapters.providers._spec import Provider as Provider
    from xpeval.adapters.registry import ADAPTER_REGISTRY as ADAPTER_REGISTRY
    from xpeval.adapters.registry import DirectEntry as DirectEntry
    from xpeval.adapters.registry import WrapperEntry as WrapperEntry
    from xpeval.adapters.registry import adapter_ids as adapter_ids
    from xpeval.adapters.registry import create_adapter as create_adapter
    from xpeval.adapters.registry import effective_contract as effective_contract
    from xpeval.adapters.registry import ensure_loaded as ensure_loaded
    from xpeval.adapters.registry import get_entry as get_entry
    from xpeval.adapters.registry import register_adapter as register_adapter
    from xpeval.errors import RegistryError as RegistryError
    from xpeval.errors import UnknownAdapterError as UnknownAdapterError
