"""The ``torch.nn`` layers a chain may construct, from literal arguments: ``nn.Linear(64, 128)(x)``.

A layer in a chain is a value of one kind only: it is constructed from literals (ints, floats,
bools, None, tuples of ints, a string from a fixed set), and then called at once or bound to a
name that is only ever called. Nothing else can be done with it (no attribute, no argument to
another call), so a chain never holds a module object: ``build_function`` replaces each call of a
layer with a call of its forward, written here as torch's own ``forward`` is (``F.linear(x,
weight, bias)``), with the layer's tensors (parameters and buffers) passed in as extra inputs of
the chain function. The engine makes those tensors once per size, outside every timed call, by
constructing the real ``torch.nn`` module on the run's device and dtype
(``probes.engine.inputs``), and the memory guard counts them as it counts inputs.

Each argument is checked here, without torch: its kind, its range, at most MAX_LAYERS layers.
Whatever torch's constructor checks besides (``GroupNorm(3, 64)``) it says when the memory guard
constructs the layer on meta tensors, before anything is allocated. This module never imports
torch; the forwards get ``torch`` and ``F`` from the namespace the chain is built with.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

__all__ = ["LAYERS", "MAX_LAYERS", "Layer", "LayerArgumentError", "layer_from_call"]

MAX_LAYERS = 64
"""Most layers one chain may construct."""
MAX_COUNT = 2**31 - 1
"""Largest feature count, channel count, kernel size, stride...: the memory guard refuses what
would not fit long before; this keeps every Python value small."""
MAX_TUPLE = 8
"""Longest tuple of ints an argument may be (``normalized_shape``, ``kernel_size``)."""

ArgKind = Literal["count", "counts", "padding", "float", "eps", "bool", "choice", "dim", "index", "none", "false"]

REQUIRED = object()
"""The default of an argument that must be given."""


@dataclass(frozen=True)
class Arg:
    """One constructor argument, in torch's positional order."""

    name: str
    kind: ArgKind
    default: object = REQUIRED
    choices: tuple[str, ...] = ()
    low: float = 0.0
    high: float = math.inf


TensorRole = Literal["parameter", "buffer"]
Forward = Callable[..., Any]


@dataclass(frozen=True)
class LayerClass:
    """An allowed ``torch.nn`` class: its arguments, its tensors for a configuration, and its
    forward (given the chain's namespace and the configuration)."""

    name: str
    args: tuple[Arg, ...]
    tensors: Callable[[Mapping[str, Any]], tuple[tuple[str, TensorRole], ...]]
    forward: Callable[[Mapping[str, object], Mapping[str, Any]], Forward]
    factory: bool = True
    """Whether the constructor takes ``device=`` and ``dtype=`` (a class with tensors does)."""


class LayerArgumentError(ValueError):
    """A refused argument: the message, and the node it is about."""

    def __init__(self, message: str, node: ast.AST) -> None:
        super().__init__(message)
        self.node = node


# ---------------------------------------------------------------------------------------------
# Tensors per configuration
# ---------------------------------------------------------------------------------------------


def _weight_bias(
    flag: str, bias_flag: str | None = "bias"
) -> Callable[[Mapping[str, Any]], tuple[tuple[str, TensorRole], ...]]:
    """``weight`` when ``flag`` is set (always when ``flag`` is empty), ``bias`` when also
    ``bias_flag`` is (always when it is None)."""

    def tensors(config: Mapping[str, Any]) -> tuple[tuple[str, TensorRole], ...]:
        if flag and not config[flag]:
            return ()
        with_bias = bias_flag is None or config[bias_flag]
        return (("weight", "parameter"), ("bias", "parameter")) if with_bias else (("weight", "parameter"),)

    return tensors


def _batch_norm_tensors(config: Mapping[str, Any]) -> tuple[tuple[str, TensorRole], ...]:
    affine: tuple[tuple[str, TensorRole], ...] = (
        (("weight", "parameter"), ("bias", "parameter")) if config["affine"] else ()
    )
    stats: tuple[tuple[str, TensorRole], ...] = (
        (("running_mean", "buffer"), ("running_var", "buffer"), ("num_batches_tracked", "buffer"))
        if config["track_running_stats"]
        else ()
    )
    return affine + stats


def _only_weight(config: Mapping[str, Any]) -> tuple[tuple[str, TensorRole], ...]:
    return (("weight", "parameter"),)


def _rms_norm_tensors(config: Mapping[str, Any]) -> tuple[tuple[str, TensorRole], ...]:
    return (("weight", "parameter"),) if config["elementwise_affine"] else ()


def _none(config: Mapping[str, Any]) -> tuple[tuple[str, TensorRole], ...]:
    return ()


# ---------------------------------------------------------------------------------------------
# Forwards: each as torch's module writes it (torch/nn/modules/*.py), in training mode, as a
# freshly constructed module runs
# ---------------------------------------------------------------------------------------------


def _tuple(value: Any, size: int) -> Any:
    """torch's ``_single``/``_pair``: an int repeated, a tuple as it is (a string as it is)."""
    return value if isinstance(value, (tuple, str)) else (value,) * size


def _linear(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
    F: Any = ns["F"]

    def forward(x: Any, weight: Any = None, bias: Any = None) -> Any:
        return F.linear(x, weight, bias)

    return forward


def _layer_norm(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
    F: Any = ns["F"]
    shape, eps = _tuple(config["normalized_shape"], 1), config["eps"]

    def forward(x: Any, weight: Any = None, bias: Any = None) -> Any:
        return F.layer_norm(x, shape, weight, bias, eps)

    return forward


def _rms_norm(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
    F: Any = ns["F"]
    shape, eps = _tuple(config["normalized_shape"], 1), config["eps"]

    def forward(x: Any, weight: Any = None) -> Any:
        return F.rms_norm(x, shape, weight, eps)

    return forward


def _group_norm(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
    F: Any = ns["F"]
    groups, eps = config["num_groups"], config["eps"]

    def forward(x: Any, weight: Any = None, bias: Any = None) -> Any:
        return F.group_norm(x, groups, weight, bias, eps)

    return forward


def _batch_norm(dims: tuple[int, ...], wording: str) -> Callable[[Mapping[str, object], Mapping[str, Any]], Forward]:
    """``_BatchNorm.forward`` in training mode: the input's dims checked, the batch counter
    bumped (a kernel of its own), the running stats updated by ``F.batch_norm``."""

    def make(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
        F: Any = ns["F"]
        momentum, eps = config["momentum"], config["eps"]

        def forward(
            x: Any,
            weight: Any = None,
            bias: Any = None,
            running_mean: Any = None,
            running_var: Any = None,
            num_batches_tracked: Any = None,
        ) -> Any:
            if x.dim() not in dims:
                raise ValueError(f"expected {wording} input (got {x.dim()}D input)")
            if num_batches_tracked is not None:
                num_batches_tracked.add_(1)
            return F.batch_norm(x, running_mean, running_var, weight, bias, True, momentum, eps)

        return forward

    return make


def _conv(size: int) -> Callable[[Mapping[str, object], Mapping[str, Any]], Forward]:
    def make(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
        conv: Any = ns["F"].conv1d if size == 1 else ns["F"].conv2d  # type: ignore[attr-defined]
        stride, padding = _tuple(config["stride"], size), _tuple(config["padding"], size)
        dilation, groups = _tuple(config["dilation"], size), config["groups"]

        def forward(x: Any, weight: Any = None, bias: Any = None) -> Any:
            return conv(x, weight, bias, stride, padding, dilation, groups)

        return forward

    return make


def _embedding(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
    F: Any = ns["F"]
    padding_idx = config["padding_idx"]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += config["num_embeddings"]  # as the constructor stores it
    norm_type, by_freq = config["norm_type"], config["scale_grad_by_freq"]

    def forward(x: Any, weight: Any = None) -> Any:
        return F.embedding(x, weight, padding_idx, None, norm_type, by_freq, False)

    return forward


def _dropout(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
    F: Any = ns["F"]
    p, inplace = config["p"], config["inplace"]

    def forward(x: Any) -> Any:
        return F.dropout(x, p, True, inplace)

    return forward


def _activation(
    name: str, *keys: str, module: str = "F"
) -> Callable[[Mapping[str, object], Mapping[str, Any]], Forward]:
    """``F.<name>(x, **config)`` (``torch.<name>(x)`` for Tanh and Sigmoid)."""

    def make(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
        function: Any = getattr(ns[module], name)
        kwargs = {key: config[key] for key in keys}

        def forward(x: Any) -> Any:
            return function(x, **kwargs)

        return forward

    return make


def _softmax(name: str) -> Callable[[Mapping[str, object], Mapping[str, Any]], Forward]:
    def make(ns: Mapping[str, object], config: Mapping[str, Any]) -> Forward:
        function: Any = getattr(ns["F"], name)
        dim = config["dim"]

        def forward(x: Any) -> Any:
            return function(x, dim, _stacklevel=5)

        return forward

    return make


# ---------------------------------------------------------------------------------------------
# The allow-list
# ---------------------------------------------------------------------------------------------

_EPS = Arg("eps", "eps", 1e-5)
_INPLACE = Arg("inplace", "bool", False)
_CONV_ARGS = (
    Arg("in_channels", "count"),
    Arg("out_channels", "count"),
    Arg("kernel_size", "counts"),
    Arg("stride", "counts", 1),
    Arg("padding", "padding", 0),
    Arg("dilation", "counts", 1),
    Arg("groups", "count", 1),
    Arg("bias", "bool", True),
    Arg("padding_mode", "choice", "zeros", choices=("zeros",)),
)
_BATCH_NORM_ARGS = (
    Arg("num_features", "count"),
    _EPS,
    Arg("momentum", "float", 0.1, low=0.0, high=1.0),
    Arg("affine", "bool", True),
    Arg("track_running_stats", "bool", True),
)

LAYERS: dict[str, LayerClass] = {
    layer.name: layer
    for layer in (
        LayerClass(
            "Linear",
            (Arg("in_features", "count"), Arg("out_features", "count"), Arg("bias", "bool", True)),
            _weight_bias(""),
            _linear,
        ),
        LayerClass(
            "LayerNorm",
            (
                Arg("normalized_shape", "counts"),
                _EPS,
                Arg("elementwise_affine", "bool", True),
                Arg("bias", "bool", True),
            ),
            _weight_bias("elementwise_affine"),
            _layer_norm,
        ),
        LayerClass(
            "RMSNorm",
            (Arg("normalized_shape", "counts"), Arg("eps", "eps", None), Arg("elementwise_affine", "bool", True)),
            _rms_norm_tensors,
            _rms_norm,
        ),
        LayerClass(
            "GroupNorm",
            (Arg("num_groups", "count"), Arg("num_channels", "count"), _EPS, Arg("affine", "bool", True)),
            _weight_bias("affine", None),
            _group_norm,
        ),
        LayerClass("BatchNorm1d", _BATCH_NORM_ARGS, _batch_norm_tensors, _batch_norm((2, 3), "2D or 3D")),
        LayerClass("BatchNorm2d", _BATCH_NORM_ARGS, _batch_norm_tensors, _batch_norm((4,), "4D")),
        LayerClass("Conv1d", _CONV_ARGS, _weight_bias(""), _conv(1)),
        LayerClass("Conv2d", _CONV_ARGS, _weight_bias(""), _conv(2)),
        LayerClass(
            "Embedding",
            (
                Arg("num_embeddings", "count"),
                Arg("embedding_dim", "count"),
                Arg("padding_idx", "index", None),
                Arg("max_norm", "none", None),
                Arg("norm_type", "float", 2.0, low=0.0, high=1e6),
                Arg("scale_grad_by_freq", "bool", False),
                Arg("sparse", "false", False),
            ),
            _only_weight,
            _embedding,
        ),
        LayerClass("Dropout", (Arg("p", "float", 0.5, low=0.0, high=1.0), _INPLACE), _none, _dropout, factory=False),
        LayerClass("ReLU", (_INPLACE,), _none, _activation("relu", "inplace"), factory=False),
        LayerClass("SiLU", (_INPLACE,), _none, _activation("silu", "inplace"), factory=False),
        LayerClass(
            "GELU",
            (Arg("approximate", "choice", "none", choices=("none", "tanh")),),
            _none,
            _activation("gelu", "approximate"),
            factory=False,
        ),
        LayerClass(
            "LeakyReLU",
            (Arg("negative_slope", "float", 0.01, low=-1e6, high=1e6), _INPLACE),
            _none,
            _activation("leaky_relu", "negative_slope", "inplace"),
            factory=False,
        ),
        LayerClass("Tanh", (), _none, _activation("tanh", module="torch"), factory=False),
        LayerClass("Sigmoid", (), _none, _activation("sigmoid", module="torch"), factory=False),
        LayerClass("Softmax", (Arg("dim", "dim", None),), _none, _softmax("softmax"), factory=False),
        LayerClass("LogSoftmax", (Arg("dim", "dim", None),), _none, _softmax("log_softmax"), factory=False),
    )
}
"""The ``torch.nn`` classes a chain may construct (``nn.X`` or ``torch.nn.X``)."""

LAYER_NAMES = ", ".join(LAYERS)


# ---------------------------------------------------------------------------------------------
# A layer of a chain
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One construction in a chain: the class, every argument by name (defaults filled in) and
    where it is. Its tensors are extra inputs of the chain function, named ``tensor_names``."""

    name: str
    config: tuple[tuple[str, Any], ...]
    line: int
    col: int

    @property
    def cls(self) -> LayerClass:
        return LAYERS[self.name]

    def kwargs(self) -> dict[str, Any]:
        """The constructor's arguments by name (as torch's constructor takes them)."""
        return dict(self.config)

    @property
    def tensors(self) -> tuple[tuple[str, TensorRole], ...]:
        """(name, role) of each tensor the layer holds, in the order the chain function takes them."""
        return self.cls.tensors(self.kwargs())

    def forward(self, namespace: Mapping[str, object]) -> Forward:
        """The layer's forward, its tensors passed by name (``forward(x, weight=w, bias=b)``)."""
        return self.cls.forward(namespace, self.kwargs())

    def text(self) -> str:
        """How the chain spelled it, near enough: ``nn.Linear(64, 128)`` (arguments away from
        their defaults only)."""
        given = [
            repr(value) if arg.default is REQUIRED else f"{name}={value!r}"
            for (name, value), arg in zip(self.config, self.cls.args, strict=True)
            if value != arg.default
        ]
        return f"nn.{self.name}({', '.join(given)})"


def _number(node: ast.expr) -> object:
    """A literal number (``3``, ``-1``, ``1e-5``), None, True/False or a string; else the node."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = node.operand
        if isinstance(inner, ast.Constant) and isinstance(inner.value, (int, float)) and type(inner.value) is not bool:
            return -inner.value if isinstance(node.op, ast.USub) else inner.value
        return node
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool, str, type(None)):
        return node.value
    return node


def _int_in(value: object, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _value(arg: Arg, node: ast.expr, layer: str) -> object:
    """The checked literal value of ``node`` for ``arg``; LayerArgumentError if it is not one."""
    where = f"nn.{layer}'s {arg.name}"
    value = _number(node)
    if isinstance(node, ast.Tuple) and arg.kind in ("counts", "padding"):
        items = [_number(item) for item in node.elts]
        least = 0 if arg.kind == "padding" else 1
        if not 1 <= len(items) <= MAX_TUPLE or not all(_int_in(item, least, MAX_COUNT) for item in items):
            raise LayerArgumentError(
                f"{where} must be a tuple of 1 to {MAX_TUPLE} int literals from {least} to {MAX_COUNT:,}", node
            )
        return tuple(items)
    if isinstance(value, ast.AST):
        raise LayerArgumentError(
            f"{where} must be a literal (like 64, 1e-5, True or (3, 3)): a layer's arguments are never computed",
            node,
        )
    if arg.kind in ("count", "counts") and _int_in(value, 1, MAX_COUNT):
        return value
    if arg.kind == "padding" and (_int_in(value, 0, MAX_COUNT) or value in ("same", "valid")):
        return value
    if arg.kind == "bool" and type(value) is bool:
        return value
    if arg.kind == "false" and value is False:
        return value
    if arg.kind == "none" and value is None:
        return value
    if arg.kind == "choice" and value in arg.choices:
        return value
    if arg.kind == "dim" and (value is None or _int_in(value, -64, 63)):
        return value
    if arg.kind == "index" and (value is None or _int_in(value, -MAX_COUNT, MAX_COUNT)):
        return value
    if arg.kind in ("float", "eps") and type(value) in (int, float):
        number = float(cast(float, value))
        low, high = (0.0, 1.0) if arg.kind == "eps" else (float(arg.low), float(arg.high))
        if math.isfinite(number) and low <= number <= high:
            return number
    if arg.kind == "eps" and value is None and arg.default is None:
        return value
    raise LayerArgumentError(f"{where} must be {_wanted(arg)}", node)


def _wanted(arg: Arg) -> str:
    return {
        "count": f"an int literal from 1 to {MAX_COUNT:,}",
        "counts": f"an int literal from 1 to {MAX_COUNT:,}, or a tuple of them",
        "padding": "an int literal from 0 up, a tuple of them, 'same' or 'valid'",
        "float": f"a number literal from {arg.low:g} to {arg.high:g}",
        "eps": "a number literal from 0 to 1" + (" or None" if arg.default is None else ""),
        "bool": "True or False",
        "choice": "one of " + ", ".join(repr(choice) for choice in arg.choices),
        "dim": "None or an int literal from -64 to 63",
        "index": "None or an int literal",
        "none": "None (the default)",
        "false": "False (the default)",
    }[arg.kind]


def layer_from_call(name: str, call: ast.Call, line: int, col: int) -> Layer:
    """The layer ``nn.<name>(...)`` constructs, its arguments checked; LayerArgumentError if one
    is refused (the caller places the message at the error's node)."""
    cls = LAYERS[name]
    if len(call.args) > len(cls.args):
        raise LayerArgumentError(
            f"nn.{name} takes at most {len(cls.args)} arguments ({len(call.args)} given)", call.args[len(cls.args)]
        )
    values: dict[str, object] = {}
    for arg, node in zip(cls.args, call.args, strict=False):
        values[arg.name] = _value(arg, node, name)
    by_name = {arg.name: arg for arg in cls.args}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise LayerArgumentError("**kwargs is not allowed", keyword)
        if keyword.arg in ("device", "dtype"):
            raise LayerArgumentError(
                f"nn.{name}'s {keyword.arg} is the run's: a layer's tensors are made on the chosen device and dtype",
                keyword,
            )
        if keyword.arg not in by_name:
            known = ", ".join(by_name) or "none"
            raise LayerArgumentError(
                f"nn.{name} has no argument '{keyword.arg}' a chain may give (it takes: {known})", keyword
            )
        if keyword.arg in values:
            raise LayerArgumentError(f"nn.{name} got '{keyword.arg}' twice", keyword)
        values[keyword.arg] = _value(by_name[keyword.arg], keyword.value, name)
    missing = [arg.name for arg in cls.args if arg.default is REQUIRED and arg.name not in values]
    if missing:
        raise LayerArgumentError(f"nn.{name} needs {', '.join(missing)}", call)
    config = tuple((arg.name, values.get(arg.name, arg.default)) for arg in cls.args)
    return Layer(name, config, line, col)
