"""The layers of one node merged into the `View` a dialect shapes.

One layer is wrapped as it is. Several layers (an inlined `$ref` target, flattened `allOf`
members) are merged keyword by keyword, each keyword family by its own rule (`_COMBINE`):
subschemas of single and map positions apply together (their layers are stacked), `allOf`
members add up, `required` is the union, other schema lists cannot be combined (one is kept and
the other reported), and a scalar keyword is combined by `_merge`: against a `$ref` target the
node's own value wins, between `allOf` members both apply. Every constraint the merge weakens
is reported as a loss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._merge import both_apply, node_wins
from xpeval.adapters.schema._types import Loss, LossAction
from xpeval.adapters.schema._values import json_equal
from xpeval.adapters.schema._vocab import DEFS, LIST_SCHEMA, MAP_SCHEMA, SCHEMA_POSITIONS, SINGLE_SCHEMA
from xpeval.adapters.schema._walk import Layer, LayerKind, Layers, Refused, View


def sibling_keywords(layers: list[Layer] | Layers, i: int) -> set[str]:
    """Keywords that sit beside layer i's `$ref` on the same node."""
    found: set[str] = set()
    for j, layer in enumerate(layers):
        node = layer.node
        if type(node) is not dict:
            if node is False:
                found.add("false")
            continue
        for key in node:
            if key in layer.skip or key in DEFS or (j == i and key == "$ref"):
                continue
            found.add(key)
    return found


class ViewBuilder:
    """Builds the view of each node of one pass; reports into the pass's `losses`."""

    def __init__(self, losses: list[Loss], *, keep_defs: bool, child_skip: frozenset[str]) -> None:
        self.losses = losses
        self.keep_defs = keep_defs
        """Whether `$defs` stay in place (references kept as they are) or are dropped from the
        node (the pass moves or inlines what they hold)."""
        self.child_skip = child_skip

    def view(self, layers: Layers) -> View | None:
        """One view of the node's keywords; None when the node is a boolean schema."""
        if len(layers) == 1:
            layer = layers[0]
            node = layer.node
            if type(node) is not dict:
                if isinstance(node, bool):
                    return None
                raise _not_a_schema(layer)
            return View(self.wrap_all(node, layer), layer.ptr, None, layers)
        dict_layers = []
        for layer in layers:
            node = layer.node
            if node is False:
                return None
            if node is True:
                continue
            if type(node) is not dict:
                raise _not_a_schema(layer)
            dict_layers.append(layer)
        if not dict_layers:
            return View({}, layers[0].ptr, None, layers)
        if len(dict_layers) == 1:
            layer = dict_layers[0]
            return View(self.wrap_all(layer.node, layer), layer.ptr, None, layers)
        return self._merge(dict_layers, layers)

    # ------------------------------------------------------------------ one layer

    def wrap_all(self, node: dict[str, Any], layer: Layer) -> dict[str, Any]:
        """The node's keywords, its subschemas wrapped as layers of the children to walk."""
        kw: dict[str, Any] = {}
        skip = layer.skip
        for key, value in node.items():
            if skip and key in skip:
                continue
            if key not in SCHEMA_POSITIONS:
                kw[key] = value
            elif key in DEFS and not self.keep_defs:
                continue
            elif key == "items" and isinstance(value, list):
                # draft-04 tuple form: the same meaning as 2020-12 prefixItems
                kw["prefixItems"] = self._wrap("prefixItems", value, layer, key)
            elif key == "additionalItems" and isinstance(node.get("items"), list):
                kw["items"] = self._wrap("items", value, layer, key)
            else:
                kw[key] = self._wrap(key, value, layer, key)
        return kw

    def _wrap(self, key: str, value: Any, layer: Layer, source_key: str) -> Any:
        base = (layer.ptr, source_key)
        kind = layer.kind
        skip = self.child_skip
        if key in SINGLE_SCHEMA:
            return (Layer(value, base, kind, skip),)
        if key in MAP_SCHEMA:
            if type(value) is not dict:
                raise Refused(
                    R.NOT_JSON_SCHEMA,
                    f"{source_key} at {P.to_str(layer.ptr) or '/'} must be an object mapping names to "
                    f"schemas, got {type(value).__name__}",
                )
            return {name: (Layer(sub, (base, name), kind, skip),) for name, sub in value.items()}
        if type(value) is not list or not value:
            raise Refused(
                R.NOT_JSON_SCHEMA,
                f"{source_key} at {P.to_str(layer.ptr) or '/'} must be a non-empty array of schemas",
            )
        return [(Layer(sub, (base, j), kind, skip),) for j, sub in enumerate(value)]

    # ------------------------------------------------------------------ several layers

    def _merge(self, layers: list[Layer], all_layers: Layers) -> View:
        kw: dict[str, Any] = {}
        src: dict[str, P.Ptr] = {}
        first_raw: dict[str, Any] = {}
        prop_sets: list[tuple[Layer, set[str]]] = []
        for layer in layers:
            node = layer.node
            wrapped = self.wrap_all(node, layer)
            if "properties" in wrapped or "additionalProperties" in wrapped or "patternProperties" in wrapped:
                props = node.get("properties")
                prop_sets.append((layer, set(props) if isinstance(props, dict) else set()))
            for key, value in wrapped.items():
                if key not in kw:
                    kw[key] = value
                    src[key] = layer.ptr
                    first_raw[key] = node.get(key)
                    continue
                combine = _COMBINE.get(key, ViewBuilder._both_values)
                kw[key] = combine(self, key, kw[key], value, layer, first_raw[key])
        if len(prop_sets) > 1:
            self._check_closed_objects(kw, prop_sets)
        return View(kw, layers[0].ptr, src, all_layers)

    # Each combiner: (key, value so far, this layer's value, this layer, the first layer's raw
    # value) -> the merged value.

    def _stack_layers(self, key: str, current: Any, value: Any, layer: Layer, first: Any) -> Any:
        return current + value

    def _stack_named_layers(self, key: str, current: Any, value: Any, layer: Layer, first: Any) -> Any:
        merged = dict(current)
        for name, sub in value.items():
            merged[name] = merged.get(name, ()) + sub
        return merged

    def _keep_one_list(self, key: str, current: Any, value: Any, layer: Layer, first: Any) -> Any:
        if not json_equal(first, layer.node.get(key)):
            self._loss(
                layer,
                key,
                "relaxed",
                f"two schemas apply here and the dialect keeps only one of two different {key} lists: "
                "this one is dropped",
            )
        return current

    def _union_required(self, key: str, current: Any, value: Any, layer: Layer, first: Any) -> Any:
        if isinstance(current, list) and isinstance(value, list):
            return current + [r for r in value if r not in current]
        return current

    def _both_values(self, key: str, current: Any, value: Any, layer: Layer, first: Any) -> Any:
        combine = node_wins if layer.kind is LayerKind.REF else both_apply
        result, exact = combine(key, current, value)
        if not exact:
            self._value_loss(layer, key, current, value)
        return result

    def _value_loss(self, layer: Layer, key: str, kept: Any, dropped: Any) -> None:
        if layer.kind is LayerKind.REF:
            # The text is part of the pass's output; adapters/schema/RULES.md states the rule.
            detail = (
                f"the node's own {key}={_short(kept)} wins over the referenced schema's {_short(dropped)} "
                "(adapters/schema/RULES.md: the node's own value wins), so the referenced constraint is "
                "looser now"
            )
            self._loss(layer, key, "relaxed", detail)
        else:
            detail = f"allOf members disagree on {key}: kept {_short(kept)}, dropped {_short(dropped)}"
            self._loss(layer, key, "dropped", detail)

    def _check_closed_objects(self, kw: dict[str, Any], prop_sets: list[tuple[Layer, set[str]]]) -> None:
        """A part that closed its object (additionalProperties / patternProperties) forbade the
        properties another part declares; after merging they are allowed."""
        merged = set(kw.get("properties", {}))
        for layer, own in prop_sets:
            node = layer.node
            extra = node.get("additionalProperties", True)
            if (extra is True or extra == {}) and "patternProperties" not in node:
                continue
            added = merged - own
            if added:
                self._loss(
                    layer,
                    "additionalProperties",
                    "relaxed",
                    f"merging schemas adds properties {sorted(added)} that this part's additionalProperties "
                    "did not allow",
                )

    def _loss(self, layer: Layer, key: str, action: LossAction, detail: str) -> None:
        pointer = P.join(P.to_str(layer.ptr), key)
        self.losses.append(Loss(pointer=pointer, keyword=key, action=action, detail=detail))


_Combiner = Callable[[ViewBuilder, str, Any, Any, Layer, Any], Any]
_COMBINE: dict[str, _Combiner] = {
    **{key: ViewBuilder._stack_layers for key in SINGLE_SCHEMA},
    **{key: ViewBuilder._stack_named_layers for key in MAP_SCHEMA},
    **{key: ViewBuilder._keep_one_list for key in LIST_SCHEMA},
    "allOf": ViewBuilder._stack_layers,
    "required": ViewBuilder._union_required,
}
"""How a keyword the view already has combines with another layer's (default: `_both_values`)."""


def _not_a_schema(layer: Layer) -> Refused:
    return Refused(
        R.NOT_JSON_SCHEMA,
        f"the schema at {P.to_str(layer.ptr) or '/'} must be an object or a boolean, "
        f"got {type(layer.node).__name__}",
    )


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
