"""What one pass walks with: its budgets, the modes a dialect picks, and the records of a node.

A node is walked as a stack of *layers*: the schema object found at the node, plus the target
of an inlined `$ref` or the members of a flattened `allOf`. A `Task` is one output node still to
build; a `View` is the merged keywords of its layers, which the dialect's `shape` turns into the
output node. Nothing here walks: `_view` merges layers, `_engine` runs the walk.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, NamedTuple

from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema._vocab import DEFS
from xpeval.adapters.schema.refusals import RefusalRule


class Refused(Exception):
    """The dialect cannot express this schema; the message is the reason given to the user, and
    `rule` the refusal rule it follows (`adapters/schema/refusals.py`)."""

    def __init__(self, rule: RefusalRule, reason: str) -> None:
        super().__init__(reason)
        self.rule = rule


@dataclass(frozen=True)
class Budgets:
    """Limits of one pass over one schema, each enforced on its own (adapters/schema/RULES.md)."""

    max_depth: int = 64
    """How deep the output nests; a deep schema without a single `$ref` is stopped here."""
    max_nodes: int = 10_000
    """How many output nodes are built; a wide schema or an inlining blow-up is stopped here."""
    max_expansions: int = 1_000
    """How many `$ref`s are inlined; a reference bomb is stopped here."""
    max_literal_depth: int = 32
    """How deep a literal (`default`, `enum` member, `const`) may nest before it is dropped."""


DEFAULT_BUDGETS = Budgets()


class Budget(enum.StrEnum):
    """Which budget a pass spent (the value is how losses and refusals name it)."""

    DEPTH = "depth"
    NODES = "node"
    EXPANSIONS = "expansion"


class RefMode(enum.Enum):
    """How a dialect treats references."""

    KEEP = "keep"
    """They stay as they are (the document's own `$defs` go along)."""
    DEFS = "defs"
    """Every target is emitted once into the output's root `$defs` (the only place some
    providers look) and the reference points there."""
    INLINE = "inline"
    """Every reference is replaced by its target (the dialect has no references)."""


class RefAction(enum.Enum):
    """What to do with one `$ref` found on a node."""

    KEEP = "keep"
    INLINE = "inline"
    WRAP = "wrap"
    """Kept, but moved into a one-member combinator beside the node's annotations."""


class LayerKind(enum.Enum):
    """How a layer combines with the layers before it."""

    PRIMARY = "primary"
    """The schema found at the node."""
    REF = "ref"
    """An inlined `$ref` target: the node's own values win over it."""
    CONJ = "conj"
    """A flattened `allOf` member (or a type the pass adds): both apply."""


NO_SKIP: frozenset[str] = frozenset()
SKIP_DEFS: frozenset[str] = DEFS


class Layer(NamedTuple):
    node: Any
    ptr: P.Ptr
    """Where `node` is in the original schema."""
    kind: LayerKind
    skip: frozenset[str]
    """Keywords of `node` already dealt with (an inlined `$ref`, a flattened `allOf`)."""


Layers = tuple[Layer, ...]


class Task:
    """One output node still to build: its layers and where its output goes.

    Plain booleans rather than an `enum.Flag`: they are tested several times per node, and a
    Flag test costs ten times an attribute read."""

    __slots__ = (
        "chain",
        "depth",
        "holder",
        "key",
        "layers",
        "member",
        "nullable",
        "out_ptr",
        "owner",
        "root",
    )

    def __init__(
        self,
        layers: Layers,
        depth: int,
        holder: Any,
        key: Any,
        out_ptr: P.Ptr,
        chain: frozenset[str],
        owner: str | None,
        root: bool = False,
        nullable: bool = False,
        member: bool = False,
    ) -> None:
        self.layers = layers
        self.depth = depth
        self.holder = holder
        self.key = key
        """The output is written to `holder[key]`."""
        self.out_ptr = out_ptr
        self.chain = chain
        """Pointers of the `$ref` targets inlined on the way here (a repeat is a cycle)."""
        self.owner = owner
        """The output `$defs` entry this node is built into (None: the root document)."""
        self.root = root
        self.nullable = nullable
        """The dialect must also admit null here (an optional property made required)."""
        self.member = member
        """A union member the pass made from its parent (its annotations stay on the parent)."""


class View:
    """The merged keywords of one node. Schema-valued keywords hold `Layers` (single), a dict of
    `Layers` (properties-like) or a list of `Layers` (anyOf-like)."""

    __slots__ = ("kw", "layers", "ptr", "src")

    def __init__(self, kw: dict[str, Any], ptr: P.Ptr, src: dict[str, P.Ptr] | None, layers: Layers) -> None:
        self.kw = kw
        self.ptr = ptr
        self.src = src
        """Which layer each keyword came from, when there were several."""
        self.layers = layers
        """The layers this view merges (after references were inlined)."""

    def origin(self, keyword: str) -> P.Ptr:
        if self.src is not None and keyword in self.src:
            return self.src[keyword]
        return self.ptr

    def at(self, keyword: str) -> str:
        """JSON pointer of `keyword` in the original schema."""
        return P.join(P.to_str(self.origin(keyword)), keyword)
