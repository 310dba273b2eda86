"""The walker every dialect pass runs on: iterative, budgeted, reporting every loss.

A node is walked as a stack of *layers*: the schema object found at the node, plus the target
of an inlined `$ref` (seed 002: the node's own values win) or the members of a flattened
`allOf` (both apply). The walker merges the layers into one *view*, hands it to the dialect's
`shape`, which builds the output node and pushes the child nodes onto an explicit stack - so a
20,000-deep schema never touches the interpreter's recursion limit.

Three separate budgets (seed 002), each enforced on its own:
- depth: how deep the output nests; a deep schema without a single `$ref` is stopped here;
- nodes: how many output nodes are built; a wide schema or an inlining blow-up is stopped here;
- expansions: how many `$ref`s are inlined; a reference bomb is stopped here.
A spent budget closes the node - as a bare `$ref` where the dialect keeps references, else as
the dialect's "any value" schema - and records a `closed-by-budget` loss. A dialect that has no
"any value" schema (strict modes, Gemini `parameters`) refuses instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from adapters.schema import _pointer as P
from adapters.schema._merge import both_apply, node_wins
from adapters.schema._types import ArgumentMap, Loss, LossAction, PassResult
from adapters.schema._values import json_equal, literal_depth_exceeds
from adapters.schema._vocab import (
    DEFS,
    JSON_TYPES,
    LIST_SCHEMA,
    MAP_SCHEMA,
    SCHEMA_POSITIONS,
    SINGLE_SCHEMA,
)

if TYPE_CHECKING:
    from adapters.schema._rules import Rules


@dataclass(frozen=True)
class Budgets:
    """Limits of one pass over one schema (see the module docstring)."""

    max_depth: int = 64
    max_nodes: int = 10_000
    max_expansions: int = 1_000
    max_literal_depth: int = 32
    """How deep a literal (`default`, `enum` member, `const`) may nest before it is dropped."""


DEFAULT_BUDGETS = Budgets()

# layer kinds: how a layer combines with the layers before it
PRIMARY, REF, CONJ = 0, 1, 2
# ref modes of a dialect
KEEP, DEFS_MODE, INLINE = 0, 1, 2
# what to do with a `$ref` found on a node
ACT_KEEP, ACT_INLINE, ACT_WRAP = 0, 1, 2
# task flags
ROOT, NULLABLE, DEF, MEMBER = 1, 2, 4, 8
"""MEMBER: a union member the pass made from its parent (its annotations stay on the parent)."""

NO_SKIP: frozenset[str] = frozenset()
SKIP_DEFS: frozenset[str] = DEFS


class Refused(Exception):
    """The dialect cannot express this schema; the message is the reason given to the user."""


class Layer(NamedTuple):
    node: Any
    ptr: P.Ptr
    kind: int
    skip: frozenset[str]


Layers = tuple[Layer, ...]


class Task:
    """One output node still to build."""

    __slots__ = ("chain", "depth", "flags", "holder", "key", "layers", "out_ptr", "owner")

    def __init__(
        self,
        layers: Layers,
        depth: int,
        holder: Any,
        key: Any,
        out_ptr: P.Ptr,
        flags: int,
        chain: frozenset[str],
        owner: str | None,
    ) -> None:
        self.layers = layers
        self.depth = depth
        self.holder = holder
        self.key = key
        self.out_ptr = out_ptr
        self.flags = flags
        self.chain = chain
        self.owner = owner


class View:
    """The merged keywords of one node. Schema-valued keywords hold `Layers` (single), a dict of
    `Layers` (properties-like) or a list of `Layers` (anyOf-like)."""

    __slots__ = ("kw", "layers", "ptr", "src")

    def __init__(self, kw: dict[str, Any], ptr: P.Ptr, src: dict[str, P.Ptr] | None, layers: Layers) -> None:
        self.kw = kw
        self.ptr = ptr
        self.src = src
        self.layers = layers
        """The layers this view merges (after references were inlined)."""

    def origin(self, keyword: str) -> P.Ptr:
        if self.src is not None and keyword in self.src:
            return self.src[keyword]
        return self.ptr

    def at(self, keyword: str) -> str:
        """JSON pointer of `keyword` in the original schema."""
        return P.join(P.to_str(self.origin(keyword)), keyword)


class Engine:
    """One pass of one dialect over one schema."""

    def __init__(self, rules: Rules, root: Any, budgets: Budgets) -> None:
        self.rules = rules
        self.root = root
        self.budgets = budgets
        self.nodes = 0
        self.deepest = 0
        self.expansions = 0
        self.losses: list[Loss] = []
        self.stack: list[Task] = []
        self.child_skip = NO_SKIP if rules.ref_mode == KEEP else SKIP_DEFS
        # defs mode: what the output's root `$defs` will hold
        self.defs_out: dict[str, Any] = {}
        self.def_names: dict[str, str] = {}
        self.used_names: set[str] = set()
        self.def_edges: set[tuple[str | None, str]] = set()
        self.extra_defs: dict[str, Any] = {}
        self._resolved: dict[str, tuple[Any, P.Ptr, str] | None] = {}
        # strict modes: how arguments differ (keyed by output pointer strings)
        self.made_nullable: dict[str, list[str]] = {}
        self.made_required: dict[str, list[str]] = {}
        self.closed: list[str] = []
        self.narrowed_types: list[str] = []
        self._out_pointers: dict[P.Ptr, str] = {}
        self.state: dict[str, Any] = {}
        """Scratch space a dialect may use for one pass (counters for its limits)."""
        if rules.ref_mode == DEFS_MODE and isinstance(root, dict):
            for key in ("$defs", "definitions"):
                defs = root.get(key)
                if isinstance(defs, dict) and key == "$defs":
                    self.used_names.update(defs)

    # ----------------------------------------------------------------- running

    def run(self) -> PassResult:
        try:
            if not isinstance(self.root, dict):
                raise Refused(f"the parameters schema must be a JSON object, got {type(self.root).__name__}")
            holder: list[Any] = [None]
            self.stack.append(
                Task((Layer(self.root, None, PRIMARY, NO_SKIP),), 0, holder, 0, None, ROOT, frozenset(), None)
            )
            self._drain()
            out = holder[0]
            if not isinstance(out, dict):
                raise Refused("the parameters schema must be an object schema")
            if self.defs_out or self.extra_defs:
                out["$defs"] = {**self.defs_out, **self.extra_defs}
            self.rules.finish(self, out)
        except Refused as refusal:
            return PassResult(schema=None, losses=self.losses, refusal=str(refusal))
        return PassResult(schema=out, losses=self.losses, arguments=self._argument_map())

    def _drain(self) -> None:
        stack = self.stack
        while stack:
            self._process(stack.pop())

    def _argument_map(self) -> ArgumentMap:
        if not (self.made_nullable or self.made_required or self.closed or self.narrowed_types):
            return _NO_ARGUMENT_CHANGES
        return ArgumentMap(
            made_nullable={k: tuple(v) for k, v in self.made_nullable.items() if v},
            made_required={k: tuple(v) for k, v in self.made_required.items() if v},
            closed=tuple(self.closed),
            narrowed_types=tuple(self.narrowed_types),
        )

    # ----------------------------------------------------------------- losses

    def loss(self, pointer: str, keyword: str, action: LossAction, detail: str) -> None:
        self.losses.append(Loss(pointer=pointer, keyword=keyword, action=action, detail=detail))

    # ----------------------------------------------------------------- one node

    def _process(self, task: Task) -> None:
        budgets = self.budgets
        if task.depth > budgets.max_depth:
            self.close(task, "depth", budgets.max_depth)
            return
        if self.nodes >= budgets.max_nodes:
            self.close(task, "node", budgets.max_nodes)
            return
        self.nodes += 1
        if task.depth > self.deepest:
            self.deepest = task.depth
        layers = task.layers
        if len(layers) == 1 and type(layers[0].node) is dict:
            node = layers[0].node
            if "$ref" in node or "allOf" in node or task.flags & ROOT:
                expanded = self._expand(task)
                if expanded is None:
                    return
                layers = expanded
        else:
            expanded = self._expand(task)
            if expanded is None:
                return
            layers = expanded
        view = self._merge(layers, task)
        if view is None:  # the node is a boolean schema
            out: Any = self.rules.boolean(self, task, layers)
        else:
            if task.flags & MEMBER:
                view.kw = {k: v for k, v in view.kw.items() if k not in _MEMBER_DROPS}
            out = self.rules.shape(self, view, task)
        self.place(task, out)

    def place(self, task: Task, out: Any) -> None:
        if task.flags & NULLABLE:
            out = self.rules.make_nullable(self, task, out)
        task.holder[task.key] = out

    def push(
        self, layers: Layers, parent: Task, holder: Any, key: Any, out_ptr: P.Ptr, flags: int = 0
    ) -> None:
        self.stack.append(
            Task(layers, parent.depth + 1, holder, key, out_ptr, flags, parent.chain, parent.owner)
        )

    def close(self, task: Task, budget: str, limit: int) -> None:
        """A spent budget: a bare `$ref` where the dialect keeps references, else "any value"."""
        first = task.layers[0]
        node = first.node
        pointer = P.to_str(first.ptr)
        ref = node.get("$ref") if isinstance(node, dict) else None
        if isinstance(ref, str) and self.rules.ref_mode != INLINE and self.resolve(ref) is not None:
            self.loss(
                pointer,
                "*",
                "closed-by-budget",
                f"{budget} budget ({limit}) spent: closed as a bare $ref, its sibling keywords dropped",
            )
            self.place(task, {"$ref": self.ref_out(ref, task)})
            return
        top = self.rules.top(self)
        if top is None:
            raise Refused(
                f"the schema is too large or too deep to rewrite: the {budget} budget ({limit}) was spent at "
                f"{pointer or '/'}, and {self.rules.label} has no schema for an unconstrained value"
            )
        self.loss(
            pointer, "*", "closed-by-budget", f"{budget} budget ({limit}) spent: node closed as any value"
        )
        self.place(task, top)

    # ----------------------------------------------------------------- references

    def resolve(self, ref: str) -> tuple[Any, P.Ptr, str] | None:
        """(target node, its pointer, its pointer string) of a same-document reference."""
        if ref in self._resolved:
            return self._resolved[ref]
        tokens = P.parse_fragment(ref)
        result: tuple[Any, P.Ptr, str] | None = None
        if tokens is not None:
            found, node = P.resolve(self.root, tokens)
            if found and isinstance(node, (dict, bool)):
                ptr = P.child(None, *tokens)
                result = (node, ptr, P.to_str(ptr))
        self._resolved[ref] = result
        return result

    def ref_out(self, ref: str, task: Task) -> str:
        """The `$ref` string to emit for `ref`. In defs mode the target is emitted once into the
        output's root `$defs` (the only place Moonshot looks) and the reference points there."""
        if self.rules.ref_mode == KEEP:
            return ref
        target = self.resolve(ref)
        if target is None:
            raise Refused(self.unresolvable_reason(ref, task))
        node, ptr, key = target
        name = self.def_names.get(key)
        if name is None:
            name = self._new_def_name(P.tokens_of(ptr))
            self.def_names[key] = name
            self.defs_out[name] = None
            self.stack.append(
                Task(
                    (Layer(node, ptr, PRIMARY, SKIP_DEFS),),
                    1,
                    self.defs_out,
                    name,
                    P.child(None, "$defs", name),
                    DEF,
                    frozenset((key,)),
                    name,
                )
            )
        self.def_edges.add((task.owner, name))
        return "#/$defs/" + P.escape(name)

    def unresolvable_reason(self, ref: str, task: Task) -> str:
        where = P.to_str(task.layers[0].ptr) or "/"
        return (
            f"$ref {ref!r} at {where} does not resolve inside the schema (it would stay a bare $ref, "
            f"which {self.rules.label} refuses)"
        )

    def _new_def_name(self, tokens: list[str | int]) -> str:
        if len(tokens) == 2 and tokens[0] == "$defs":
            name = str(tokens[1])
            self.used_names.add(name)
            return name
        if len(tokens) == 2 and tokens[0] == "definitions" and str(tokens[1]) not in self.used_names:
            name = str(tokens[1])
        else:
            base = "_".join(str(t) for t in tokens) or "root"
            name = "".join(c if c.isalnum() or c in "_-." else "_" for c in base)
        candidate, n = name, 2
        while candidate in self.used_names:
            candidate = f"{name}_{n}"
            n += 1
        self.used_names.add(candidate)
        return candidate

    def extra_def(self, name: str, schema: Any) -> str:
        """Add a dialect-made definition (Moonshot's "any value") under a free name."""
        for existing, value in self.extra_defs.items():
            if value is schema:
                return existing
        candidate, n = name, 2
        while candidate in self.used_names:
            candidate = f"{name}_{n}"
            n += 1
        self.used_names.add(candidate)
        self.extra_defs[candidate] = schema
        return candidate

    def _expand(self, task: Task) -> Layers | None:
        """Inline `$ref`s and flatten `allOf`s as the dialect asks; None when the node was
        already placed (closed by a budget, or kept as a bare `$ref` on a recursion)."""
        rules = self.rules
        out = list(task.layers)
        chain = task.chain
        flatten = rules.flatten_allof or (task.flags & ROOT and rules.flatten_root_allof)
        i = 0
        while i < len(out):
            layer = out[i]
            node = layer.node
            if type(node) is not dict:
                i += 1
                continue
            if task.flags & ROOT:
                rules.expand_root_layer(self, out, i)
                layer = out[i]
            if flatten and "allOf" in node and "allOf" not in layer.skip:
                members = node["allOf"]
                if not isinstance(members, list) or not members:
                    raise Refused(
                        f"allOf at {P.join(P.to_str(layer.ptr), 'allOf')} must be a non-empty array"
                    )
                layer = layer._replace(skip=layer.skip | {"allOf"})
                out[i] = layer
                base = P.child(layer.ptr, "allOf")
                out.extend(Layer(m, (base, j), CONJ, self.child_skip) for j, m in enumerate(members))
            if "$ref" in node and "$ref" not in layer.skip:
                ref = node["$ref"]
                if not isinstance(ref, str):
                    raise Refused(f"$ref at {P.to_str(layer.ptr) or '/'} must be a string")
                # a root $ref is always inlined: every provider wants an object schema at the root
                action = ACT_INLINE if task.flags & ROOT else rules.ref_action(self, task, out, i)
                if action == ACT_INLINE:
                    target = self.resolve(ref)
                    if target is None:
                        if rules.ref_mode == KEEP and not rules.refs_must_resolve:
                            i += 1
                            continue
                        raise Refused(self.unresolvable_reason(ref, task))
                    t_node, t_ptr, t_key = target
                    if t_key in chain:
                        if task.flags & ROOT:
                            raise Refused(f"the root $ref {ref!r} points back to itself")
                        if rules.on_cycle(self, task, out, i, ref):
                            return None
                        i += 1
                        continue
                    if self.expansions >= self.budgets.max_expansions:
                        self.close(task, "expansion", self.budgets.max_expansions)
                        return None
                    self.expansions += 1
                    chain = chain | {t_key}
                    self.loss(
                        P.join(P.to_str(layer.ptr), "$ref"),
                        "$ref",
                        "inlined",
                        f"{ref} inlined under the node (exact; "
                        + (_ROOT_INLINE if task.flags & ROOT else rules.inline_reason)
                        + ")",
                    )
                    out[i] = layer._replace(skip=layer.skip | {"$ref"})
                    out.append(Layer(t_node, t_ptr, REF, self.child_skip))
            i += 1
        task.chain = chain
        return tuple(out)

    def bare_ref_on_cycle(self, task: Task, layers: list[Layer], i: int, ref: str) -> None:
        """A `$ref` with siblings that points back into its own inlining: inlining again would never
        end, so the node is kept as a bare `$ref` and its siblings are reported dropped."""
        dropped = sorted(self.sibling_keywords(layers, i))
        self.loss(
            P.to_str(layers[i].ptr),
            "$ref",
            "dropped",
            f"recursive $ref {ref!r}: inlining it again would never end, so it stays a bare $ref and its "
            f"sibling keywords ({', '.join(dropped)}) are dropped",
        )
        self.place(task, {"$ref": self.ref_out(ref, task)})

    @staticmethod
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

    # ----------------------------------------------------------------- merging

    def _merge(self, layers: Layers, task: Task) -> View | None:
        """One view of the node's keywords; None when the node is a boolean schema."""
        if len(layers) == 1:
            layer = layers[0]
            node = layer.node
            if type(node) is not dict:
                if isinstance(node, bool):
                    return None
                raise Refused(
                    f"the schema at {P.to_str(layer.ptr) or '/'} must be an object or a boolean, "
                    f"got {type(node).__name__}"
                )
            return View(self._wrap_all(node, layer), layer.ptr, None, layers)
        dict_layers = []
        for layer in layers:
            node = layer.node
            if node is False:
                return None
            if node is True:
                continue
            if type(node) is not dict:
                raise Refused(
                    f"the schema at {P.to_str(layer.ptr) or '/'} must be an object or a boolean, "
                    f"got {type(node).__name__}"
                )
            dict_layers.append(layer)
        if not dict_layers:
            return View({}, layers[0].ptr, None, layers)
        if len(dict_layers) == 1:
            layer = dict_layers[0]
            return View(self._wrap_all(layer.node, layer), layer.ptr, None, layers)
        return self._merge_layers(dict_layers, layers)

    def _wrap_all(self, node: dict[str, Any], layer: Layer) -> dict[str, Any]:
        kw: dict[str, Any] = {}
        skip = layer.skip
        for key, value in node.items():
            if skip and key in skip:
                continue
            if key in SCHEMA_POSITIONS:
                if key in DEFS and self.rules.ref_mode != KEEP:
                    continue
                if key == "items" and isinstance(value, list):
                    # draft-04 tuple form: the same meaning as 2020-12 prefixItems
                    kw["prefixItems"] = self._wrap("prefixItems", value, layer, key)
                    continue
                if key == "additionalItems" and isinstance(node.get("items"), list):
                    kw["items"] = self._wrap("items", value, layer, key)
                    continue
                kw[key] = self._wrap(key, value, layer, key)
            else:
                kw[key] = value
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
                    f"{source_key} at {P.to_str(layer.ptr) or '/'} must be an object mapping names to "
                    "schemas, "
                    f"got {type(value).__name__}"
                )
            return {name: (Layer(sub, (base, name), kind, skip),) for name, sub in value.items()}
        if type(value) is not list or not value:
            raise Refused(
                f"{source_key} at {P.to_str(layer.ptr) or '/'} must be a non-empty array of schemas"
            )
        return [(Layer(sub, (base, j), kind, skip),) for j, sub in enumerate(value)]

    def _merge_layers(self, layers: list[Layer], all_layers: Layers) -> View:
        kw: dict[str, Any] = {}
        src: dict[str, P.Ptr] = {}
        raw: dict[str, Any] = {}
        prop_sets: list[tuple[Layer, set[str]]] = []
        for layer in layers:
            node = layer.node
            wrapped = self._wrap_all(node, layer)
            if "properties" in wrapped or "additionalProperties" in wrapped or "patternProperties" in wrapped:
                props = node.get("properties")
                prop_sets.append((layer, set(props) if isinstance(props, dict) else set()))
            for key, value in wrapped.items():
                if key not in kw:
                    kw[key] = value
                    src[key] = layer.ptr
                    raw[key] = node.get(key)
                    continue
                current = kw[key]
                if key in SINGLE_SCHEMA:
                    kw[key] = current + value
                elif key in MAP_SCHEMA:
                    merged = dict(current)
                    for name, sub in value.items():
                        merged[name] = merged.get(name, ()) + sub
                    kw[key] = merged
                elif key == "allOf":
                    kw[key] = current + value
                elif key in LIST_SCHEMA:
                    if not json_equal(raw[key], node.get(key)):
                        self._conflict_loss(layer, key, "keeps only one of two different")
                elif key == "required":
                    if isinstance(current, list) and isinstance(value, list):
                        kw[key] = current + [r for r in value if r not in current]
                else:
                    combine = node_wins if layer.kind == REF else both_apply
                    result, exact = combine(key, current, value)
                    if not exact:
                        self._value_loss(layer, key, current, value)
                    kw[key] = result
        if len(prop_sets) > 1:
            self._check_closed_objects(kw, prop_sets)
        return View(kw, layers[0].ptr, src, all_layers)

    def _conflict_loss(self, layer: Layer, key: str, what: str) -> None:
        self.loss(
            P.join(P.to_str(layer.ptr), key),
            key,
            "relaxed",
            f"two schemas apply here and the dialect {what} {key} lists: this one is dropped",
        )

    def _value_loss(self, layer: Layer, key: str, kept: Any, dropped: Any) -> None:
        if layer.kind == REF:
            detail = (
                f"the node's own {key}={_short(kept)} wins over the referenced schema's {_short(dropped)} "
                "(seed 002: the node's value wins), so the referenced constraint is looser now"
            )
            action: LossAction = "relaxed"
        else:
            detail = f"allOf members disagree on {key}: kept {_short(kept)}, dropped {_short(dropped)}"
            action = "dropped"
        self.loss(P.join(P.to_str(layer.ptr), key), key, action, detail)

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
                self.loss(
                    P.join(P.to_str(layer.ptr), "additionalProperties"),
                    "additionalProperties",
                    "relaxed",
                    f"merging schemas adds properties {sorted(added)} that this part's additionalProperties "
                    "did not allow",
                )

    # ----------------------------------------------------------------- helpers for shapes

    def check_common(self, view: View) -> None:
        """Refuse values that no JSON Schema validator would take (the BFCL pseudo-types among
        them), and normalise the two draft-04 forms 2020-12 spells differently."""
        kw = view.kw
        t = kw.get("type", _MISSING)
        if t is not _MISSING and not (type(t) is str and t in JSON_TYPES):
            names = [t] if isinstance(t, str) else t
            if not isinstance(names, list) or not names:
                raise Refused(f"type at {view.at('type')} must be a type name or a non-empty array of them")
            for name in names:
                if not isinstance(name, str) or name not in JSON_TYPES:
                    raise Refused(
                        f"type {name!r} at {view.at('type')} is not a JSON Schema type "
                        "(one of array, boolean, integer, null, number, object, string)"
                    )
        if _CHECKED.isdisjoint(kw):
            return
        required = kw.get("required", ())
        if required != () and (
            not isinstance(required, list) or not all(isinstance(r, str) for r in required)
        ):
            raise Refused(f"required at {view.at('required')} must be an array of property names")
        if "enum" in kw and not isinstance(kw["enum"], list):
            raise Refused(f"enum at {view.at('enum')} must be an array")
        for bound, inclusive in _DRAFT4_BOUNDS:
            flag = kw.get(bound)
            if flag is True or flag is False:
                # draft-04: a boolean modifier of minimum/maximum; 2020-12 spells it as a number
                del kw[bound]
                if flag and inclusive in kw:
                    kw[bound] = kw.pop(inclusive)
        literal_limit = self.budgets.max_literal_depth
        for key in _LITERALS:
            value = kw.get(key)
            if type(value) in (list, dict) and literal_depth_exceeds(value, literal_limit):
                del kw[key]
                self.loss(
                    view.at(key),
                    key,
                    "closed-by-budget",
                    f"literal nests deeper than {literal_limit} levels: dropped",
                )

    def out_pointer(self, ptr: P.Ptr) -> str:
        """The string of an output pointer, computed once per node (several records use it)."""
        cached = self._out_pointers.get(ptr)
        if cached is None:
            cached = self._out_pointers[ptr] = P.to_str(ptr)
        return cached


_NO_ARGUMENT_CHANGES = ArgumentMap()
_MISSING: Any = object()
_DRAFT4_BOUNDS = (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum"))
_LITERALS = ("enum", "const", "default", "examples")
_CHECKED = frozenset({"required", "enum", "exclusiveMinimum", "exclusiveMaximum", *_LITERALS})
_ROOT_INLINE = "the root must be an object schema, not a reference"
_MEMBER_DROPS = frozenset({"description", "title", "default", "examples", "$comment"})


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
