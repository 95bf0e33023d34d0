"""The allow-list's rules for calls: of functions and methods, and of the layers a chain constructs.

Only a name or an attribute path may be called (the path itself is checked by
probes.chain.check_attributes). ``nn.X(...)`` constructs a layer from literal arguments
(probes.chain.layers) and stands only where it is called at once or named; each construction and
each call of a layer is recorded here for build_function to lower.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import cast

from probes.chain.check_attributes import AttributeCheck
from probes.chain.check_names import RESERVED, Scope
from probes.chain.errors import NodeErrors
from probes.chain.kinds import constructed_layer
from probes.chain.layers import MAX_LAYERS, Layer, LayerArgumentError, layer_from_call


class CallCheck:
    """Checks each call and keyword argument, and records the layers the chain constructs and calls
    (in ``layers``, ``constructions`` and ``layer_calls``: the validator's own, filled here)."""

    def __init__(
        self,
        errors: NodeErrors,
        attributes: AttributeCheck,
        is_tensor: Callable[[ast.AST], bool],
        scope: Scope,
        layers: list[Layer],
        constructions: dict[int, int],
        layer_calls: dict[int, int],
    ) -> None:
        self.errors = errors
        self.attributes = attributes
        self.is_tensor = is_tensor
        self.scope = scope
        self.layers = layers
        self.constructions = constructions
        """Id of an nn.X(...) call -> its layer's index."""
        self.layer_calls = layer_calls
        """Id of a call of a layer -> the layer's index."""
        self.assigned_value: ast.expr | None = None
        """The value of the assignment being checked: where a layer may be named."""

    def keyword(self, node: ast.keyword) -> None:
        if node.arg is None:
            raise self.errors.at(node, "rejected", "**kwargs is not allowed")

    def check(self, node: ast.Call, parent: ast.AST | None) -> None:
        func = node.func
        if constructed_layer(func) is not None:
            self._construction(node, parent)
            return
        if (isinstance(func, ast.Call) and constructed_layer(func.func) is not None) or (
            isinstance(func, ast.Name) and func.id in self.scope.bound
        ):
            self._layer_call(node)
            return
        if isinstance(func, ast.Name) and (
            func.id in self.scope.local_names or func.id in self.scope.inputs or func.id in RESERVED
        ):
            raise self.errors.at(func, "rejected", f"'{func.id}' cannot be called (only functions and methods can)")
        if not isinstance(func, (ast.Name, ast.Attribute)):
            if isinstance(func, ast.Call) and isinstance(func.func, ast.Attribute):
                self.attributes.check_chain(func.func, called=True)  # nn.Module(...)(x): say what nn.Module is
            raise self.errors.at(
                func, "rejected", "only functions and methods can be called, like torch.relu(a) or a.relu()"
            )
        if isinstance(func, ast.Name) and func.id == "round" and (len(node.args) > 1 or node.keywords):
            raise self.errors.at(node, "rejected", "round(x, ndigits) is not allowed: use torch.round(x, decimals=n)")
        if isinstance(func, ast.Name) and func.id in ("min", "max") and len(node.args) == 1:
            (arg,) = node.args
            if self.is_tensor(arg):
                raise self.errors.at(
                    node,
                    "rejected",
                    f"{func.id}() of one tensor walks it element by element in Python: "
                    f"use torch.{func.id}(x) or x.{func.id}()",
                )

    def _construction(self, node: ast.Call, parent: ast.AST | None) -> int:
        """Check ``nn.X(...)``: where it stands (called at once, or the whole value of an
        assignment) and its literal arguments; the layer's index (once per node)."""
        if id(node) in self.constructions:
            return self.constructions[id(node)]
        name = constructed_layer(node.func)
        assert name is not None
        called = isinstance(parent, ast.Call) and parent.func is node
        if parent is None and node is not self.assigned_value:  # a line that is a layer: still being typed
            raise self.errors.at(
                node, "syntax", f"nn.{name}(...) is a layer, not a tensor: call it, like nn.{name}(...)(x)"
            )
        if not called and node is not self.assigned_value:
            raise self.errors.at(
                node,
                "rejected",
                f"nn.{name}(...) makes a layer, which can only be called at once, like nn.{name}(...)(x), "
                f"or named, like lin = nn.{name}(...), and then called",
            )
        if len(self.layers) >= MAX_LAYERS:
            raise self.errors.at(node, "rejected", f"a chain may construct at most {MAX_LAYERS} layers")
        line = node.lineno
        col = self.errors.col(line, node.col_offset)
        try:
            layer = layer_from_call(name, node, line, col)
        except LayerArgumentError as exc:
            raise self.errors.at(exc.node, "rejected", str(exc)) from None
        self.constructions[id(node)] = len(self.layers)
        self.layers.append(layer)
        return self.constructions[id(node)]

    def _layer_call(self, node: ast.Call) -> None:
        """A call of a layer: one tensor, given by position."""
        func = node.func
        index = (
            self._construction(func, node) if isinstance(func, ast.Call) else self.scope.bound[cast(ast.Name, func).id]
        )
        layer = self.layers[index]
        if len(node.args) != 1 or node.keywords:
            raise self.errors.at(node, "rejected", f"a layer is called with one input, like nn.{layer.name}(...)(x)")
        self.layer_calls[id(node)] = index
