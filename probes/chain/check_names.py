"""The allow-list's rules for bare names: which a chain may read, call or assign to.

A name is an input, an earlier assignment, ``N``, an allowed builtin (only ever called) or one of
torch's roots (only ever the start of an attribute path, checked by probes.chain.check_attributes).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from probes.chain.errors import NodeErrors

ALLOWED_BUILTINS: tuple[str, ...] = ("abs", "min", "max", "int", "float", "bool", "len", "round", "slice")
RESERVED: frozenset[str] = frozenset({"torch", "F", "nn", "N"})
ROOTS: frozenset[str] = frozenset({"torch", "F", "nn"})
"""The names a chain reaches torch through: only as the root of an attribute path."""
TORCH_BARE = "can only be used as torch.<function>(...) or a dtype or constant such as torch.float16"
NN_BARE = "can only be used as nn.<Layer>(...)(x) or nn.functional.<function>(...)"
LAYER_ONLY_CALLED = "can only be called, like lin(x): a layer is never a value of its own"


@dataclass(frozen=True)
class Scope:
    """What the chain defines, as the statements before the node being checked leave it: the
    validator's own collections, which it fills as it goes."""

    inputs: Collection[str]
    """Every input a chain may read, in declaration order."""
    local_names: Collection[str]
    """Names assigned by an earlier statement."""
    bound: Mapping[str, int]
    """A name that holds a layer (as the chain stands) -> the layer's index."""
    assigned: Mapping[str, int]
    """Every assignment target of the chain -> its first line."""


class NameCheck:
    """Checks each bare name against what the statements before it define."""

    def __init__(self, errors: NodeErrors, scope: Scope) -> None:
        self.errors = errors
        self.scope = scope

    def check(self, node: ast.Name, parent: ast.AST | None) -> bool:
        """Refuse a name the chain may not use here; whether it reads an input."""
        name = node.id
        if name in ROOTS and not isinstance(parent, ast.Attribute):
            raise self.errors.at(node, "rejected", f"'{name}' {NN_BARE if name == 'nn' else TORCH_BARE}")
        called = isinstance(parent, ast.Call) and parent.func is node
        if name in self.scope.bound and not called:
            raise self.errors.at(node, "rejected", f"'{name}' holds a layer: it {LAYER_ONLY_CALLED}")
        if name in ALLOWED_BUILTINS and not called:
            raise self.errors.at(node, "rejected", f"'{name}' can only be called, like {name}(x)")
        if name in self.scope.local_names or name in RESERVED or name in ALLOWED_BUILTINS:
            return False
        if name in self.scope.inputs:
            return True
        if hasattr(builtins, name) or name.startswith("_"):
            what = f"calls to '{name}' are" if called else f"the name '{name}' is"
            raise self.errors.at(
                node, "rejected", f"{what} not allowed (builtins allowed: {', '.join(ALLOWED_BUILTINS)})"
            )
        if name in self.scope.assigned:
            raise self.errors.at(
                node, "input", f"'{name}' is used before it is assigned on line {self.scope.assigned[name]}"
            )
        known = ", ".join(self.scope.inputs)
        raise self.errors.at(
            node,
            "input",
            f"unknown name '{name}': the inputs are {known}; declare others like `{name}: [N] fp32`",
        )
