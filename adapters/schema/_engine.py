"""The walker every dialect pass runs on: iterative, budgeted, reporting every loss.

Each node is a `Task` on an explicit stack, so a 20,000-deep schema never touches the
interpreter's recursion limit. For one task the engine inlines the `$ref`s and flattens the
`allOf`s its dialect asks for (the node then has several layers), merges the layers into one
`View` (`_view`), and hands the view to the dialect's `shape`, which builds the output node and
pushes the child nodes as new tasks.

Three separate budgets (`Budgets`; adapters/schema/RULES.md) each stop one kind of blow-up. A
spent budget closes the node - as a bare `$ref` where the dialect keeps references, else as the
dialect's "any value" schema - and records a `closed-by-budget` loss. A dialect that has no "any
value" schema (strict modes, Gemini `parameters`) refuses instead.
"""

from __future__ import annotations

from typing import Any, Protocol

from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._types import Loss, LossAction, PassResult, Severity
from xpeval.adapters.schema._view import ViewBuilder, sibling_keywords
from xpeval.adapters.schema._walk import (
    NO_SKIP,
    SKIP_DEFS,
    Budget,
    Budgets,
    Layer,
    LayerKind,
    Layers,
    RefAction,
    RefMode,
    Refused,
    Task,
    View,
)
from xpeval.adapters.schema.argument_map import ArgumentMap


class DialectRules(Protocol):
    """What the engine asks of a dialect (`_rules.Rules` is the base every dialect extends)."""

    label: str
    """The provider's name in refusals ("OpenAI strict mode")."""
    ref_mode: RefMode
    refs_must_resolve: bool
    """Whether a reference that does not resolve refuses the schema (else it is kept as is)."""
    flatten_allof: bool
    flatten_root_allof: bool
    inline_reason: str
    """Why an inlined `$ref` was inlined (the text of its `inlined` loss)."""

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> RefAction: ...

    def expand_root_layer(self, e: Engine, layers: list[Layer], i: int) -> None: ...

    def on_cycle(self, e: Engine, task: Task, layers: list[Layer], i: int, ref: str) -> bool: ...

    def top(self, e: Engine) -> Any | None: ...

    def boolean(self, e: Engine, task: Task, layers: Layers) -> Any: ...

    def shape(self, e: Engine, view: View, task: Task) -> Any: ...

    def make_nullable(self, e: Engine, task: Task, out: Any) -> Any: ...

    def finish(self, e: Engine, out: dict[str, Any]) -> None: ...


class Engine:
    """One pass of one dialect over one schema."""

    def __init__(self, rules: DialectRules, root: Any, budgets: Budgets) -> None:
        self.rules = rules
        self.root = root
        self.budgets = budgets
        self.nodes = 0
        self.deepest = 0
        self.expansions = 0
        self.losses: list[Loss] = []
        self.stack: list[Task] = []
        keep = rules.ref_mode is RefMode.KEEP
        self.child_skip = NO_SKIP if keep else SKIP_DEFS
        self._view = ViewBuilder(self.losses, keep_defs=keep, child_skip=self.child_skip).view
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
        if rules.ref_mode is RefMode.DEFS and isinstance(root, dict):
            defs = root.get("$defs")
            if isinstance(defs, dict):
                # the input's own names are kept, so a moved definition must not take one
                self.used_names.update(defs)

    # ----------------------------------------------------------------- running

    def run(self) -> PassResult:
        try:
            if not isinstance(self.root, dict):
                raise Refused(
                    R.ROOT_NOT_OBJECT,
                    f"the parameters schema must be a JSON object, got {type(self.root).__name__}",
                )
            holder: list[Any] = [None]
            first = Layer(self.root, None, LayerKind.PRIMARY, NO_SKIP)
            self.stack.append(Task((first,), 0, holder, 0, None, frozenset(), None, root=True))
            self._drain()
            out = holder[0]
            if not isinstance(out, dict):
                raise Refused(R.ROOT_NOT_OBJECT, "the parameters schema must be an object schema")
            if self.defs_out or self.extra_defs:
                out["$defs"] = {**self.defs_out, **self.extra_defs}
            self.rules.finish(self, out)
        except Refused as refusal:
            return PassResult(
                schema=None, losses=self.losses, refusal=str(refusal), refusal_rule=refusal.rule.id
            )
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

    def loss(
        self, pointer: str, keyword: str, action: LossAction, detail: str, severity: Severity | None = None
    ) -> None:
        loss = Loss(pointer=pointer, keyword=keyword, action=action, detail=detail)
        self.losses.append(loss if severity is None else loss.model_copy(update={"severity": severity}))

    # ----------------------------------------------------------------- one node

    def _process(self, task: Task) -> None:
        budgets = self.budgets
        if task.depth > budgets.max_depth:
            self.close(task, Budget.DEPTH, budgets.max_depth)
            return
        if self.nodes >= budgets.max_nodes:
            self.close(task, Budget.NODES, budgets.max_nodes)
            return
        self.nodes += 1
        if task.depth > self.deepest:
            self.deepest = task.depth
        layers = task.layers
        # only a node that may hold a `$ref` or an `allOf` is expanded (the common leaf is not);
        # written out here because it runs once per node
        node = layers[0].node
        if len(layers) != 1 or type(node) is not dict or "$ref" in node or "allOf" in node or task.root:
            expanded = self._expand(task)
            if expanded is None:
                return
            layers = expanded
        view = self._view(layers)
        if view is None:  # the node is a boolean schema
            out: Any = self.rules.boolean(self, task, layers)
        else:
            if task.member:
                view.kw = {k: v for k, v in view.kw.items() if k not in _MEMBER_DROPS}
            out = self.rules.shape(self, view, task)
        self.place(task, out)

    def place(self, task: Task, out: Any) -> None:
        if task.nullable:
            out = self.rules.make_nullable(self, task, out)
        task.holder[task.key] = out

    def push(
        self,
        layers: Layers,
        parent: Task,
        holder: Any,
        key: Any,
        out_ptr: P.Ptr,
        *,
        nullable: bool = False,
        member: bool = False,
    ) -> None:
        # positional: this runs once per node, and keyword arguments cost more
        self.stack.append(
            Task(
                layers,
                parent.depth + 1,
                holder,
                key,
                out_ptr,
                parent.chain,
                parent.owner,
                False,
                nullable,
                member,
            )
        )

    def close(self, task: Task, budget: Budget, limit: int) -> None:
        """A spent budget: a bare `$ref` where the dialect keeps references, else "any value"."""
        first = task.layers[0]
        node = first.node
        pointer = P.to_str(first.ptr)
        ref = node.get("$ref") if isinstance(node, dict) else None
        if (
            isinstance(ref, str)
            and self.rules.ref_mode is not RefMode.INLINE
            and self.resolve(ref) is not None
        ):
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
                R.BUDGET_SPENT,
                f"the schema is too large or too deep to rewrite: the {budget} budget ({limit}) was spent at "
                f"{pointer or '/'}, and {self.rules.label} has no schema for an unconstrained value",
            )
        self.loss(
            pointer, "*", "closed-by-budget", f"{budget} budget ({limit}) spent: node closed as any value"
        )
        self.place(task, top)

    def out_pointer(self, ptr: P.Ptr) -> str:
        """The string of an output pointer, computed once per node (several records use it)."""
        cached = self._out_pointers.get(ptr)
        if cached is None:
            cached = self._out_pointers[ptr] = P.to_str(ptr)
        return cached

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
        if self.rules.ref_mode is RefMode.KEEP:
            return ref
        target = self.resolve(ref)
        if target is None:
            raise Refused(R.UNRESOLVABLE_REF, self.unresolvable_reason(ref, task))
        node, ptr, key = target
        name = self.def_names.get(key)
        if name is None:
            name = self._new_def_name(P.tokens_of(ptr))
            self.def_names[key] = name
            self.defs_out[name] = None
            layer = Layer(node, ptr, LayerKind.PRIMARY, SKIP_DEFS)
            out_ptr = P.child(None, "$defs", name)
            self.stack.append(Task((layer,), 1, self.defs_out, name, out_ptr, frozenset((key,)), name))
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
        return self._free_name(name)

    def _free_name(self, name: str) -> str:
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
        candidate = self._free_name(name)
        self.extra_defs[candidate] = schema
        return candidate

    def bare_ref_on_cycle(self, task: Task, layers: list[Layer], i: int, ref: str) -> None:
        """A `$ref` with siblings that points back into its own inlining: inlining again would never
        end, so the node is kept as a bare `$ref` and its siblings are reported dropped."""
        dropped = sorted(sibling_keywords(layers, i))
        self.loss(
            P.to_str(layers[i].ptr),
            "$ref",
            "dropped",
            f"recursive $ref {ref!r}: inlining it again would never end, so it stays a bare $ref and its "
            f"sibling keywords ({', '.join(dropped)}) are dropped",
        )
        self.place(task, {"$ref": self.ref_out(ref, task)})

    # ----------------------------------------------------------------- expanding a node

    def _expand(self, task: Task) -> Layers | None:
        """Inline `$ref`s and flatten `allOf`s as the dialect asks; None when the node was
        already placed (closed by a budget, or kept as a bare `$ref` on a recursion)."""
        rules = self.rules
        out = list(task.layers)
        chain = task.chain
        flatten = rules.flatten_allof or (task.root and rules.flatten_root_allof)
        i = 0
        while i < len(out):
            if type(out[i].node) is dict:
                if task.root:
                    rules.expand_root_layer(self, out, i)
                if flatten:
                    self._flatten_allof(out, i)
                longer = self._expand_ref(task, out, i, chain)
                if longer is None:
                    return None
                chain = longer
            i += 1
        task.chain = chain
        return tuple(out)

    def _flatten_allof(self, out: list[Layer], i: int) -> None:
        """The members of layer i's `allOf` become layers of the node (they all apply)."""
        layer = out[i]
        node = layer.node
        if "allOf" not in node or "allOf" in layer.skip:
            return
        members = node["allOf"]
        if not isinstance(members, list) or not members:
            raise Refused(
                R.NOT_JSON_SCHEMA,
                f"allOf at {P.join(P.to_str(layer.ptr), 'allOf')} must be a non-empty array",
            )
        out[i] = layer._replace(skip=layer.skip | {"allOf"})
        base = P.child(layer.ptr, "allOf")
        out.extend(Layer(m, (base, j), LayerKind.CONJ, self.child_skip) for j, m in enumerate(members))

    def _expand_ref(
        self, task: Task, out: list[Layer], i: int, chain: frozenset[str]
    ) -> frozenset[str] | None:
        """Layer i's `$ref`, inlined when the dialect asks to; the chain of inlined targets, or None
        when the node was placed."""
        layer = out[i]
        node = layer.node
        if "$ref" not in node or "$ref" in layer.skip:
            return chain
        ref = node["$ref"]
        if not isinstance(ref, str):
            raise Refused(R.NOT_JSON_SCHEMA, f"$ref at {P.to_str(layer.ptr) or '/'} must be a string")
        # a root $ref is always inlined: every provider wants an object schema at the root
        action = RefAction.INLINE if task.root else self.rules.ref_action(self, task, out, i)
        if action is not RefAction.INLINE:
            return chain
        return self._inline(task, out, i, ref, chain)

    def _inline(
        self, task: Task, out: list[Layer], i: int, ref: str, chain: frozenset[str]
    ) -> frozenset[str] | None:
        rules = self.rules
        target = self.resolve(ref)
        if target is None:
            if rules.ref_mode is RefMode.KEEP and not rules.refs_must_resolve:
                return chain
            raise Refused(R.UNRESOLVABLE_REF, self.unresolvable_reason(ref, task))
        t_node, t_ptr, t_key = target
        if t_key in chain:
            if task.root:
                raise Refused(R.ROOT_NOT_OBJECT, f"the root $ref {ref!r} points back to itself")
            return None if rules.on_cycle(self, task, out, i, ref) else chain
        if self.expansions >= self.budgets.max_expansions:
            self.close(task, Budget.EXPANSIONS, self.budgets.max_expansions)
            return None
        self.expansions += 1
        layer = out[i]
        reason = _ROOT_INLINE if task.root else rules.inline_reason
        self.loss(
            P.join(P.to_str(layer.ptr), "$ref"),
            "$ref",
            "inlined",
            f"{ref} inlined under the node (exact; {reason})",
        )
        out[i] = layer._replace(skip=layer.skip | {"$ref"})
        out.append(Layer(t_node, t_ptr, LayerKind.REF, self.child_skip))
        return chain | {t_key}


_NO_ARGUMENT_CHANGES = ArgumentMap()
_ROOT_INLINE = "the root must be an object schema, not a reference"
_MEMBER_DROPS = frozenset({"description", "title", "default", "examples", "$comment"})
