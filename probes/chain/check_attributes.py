"""The allow-list's rules for attribute paths: ``x.y.z`` is checked once, from its root outwards.

Attribute names are open-ended, so besides the path rules on torch (functions through a few math
submodules, dtypes and constants, the layers of probes.chain.layers) every name also meets a
denylist: dunders, files, raw memory, global state...
"""

from __future__ import annotations

import ast
import re

from probes.chain.check_names import ALLOWED_BUILTINS, LAYER_ONLY_CALLED, ROOTS, TORCH_BARE, Scope
from probes.chain.errors import NodeErrors
from probes.chain.kinds import LAYER_PATHS
from probes.chain.layers import LAYER_NAMES, LAYERS

_FILES = "it reads or writes files"
_MACHINERY = "it reaches machinery outside what a chain may use"
_GLOBAL_STATE = "it changes global torch state"
_RAW_MEMORY = "no raw memory access"
_CALLBACKS = "it calls back into Python"
_CALLS_ANYTHING = "it calls whatever value it is given"
_DENIED: dict[str, str] = {
    name: why
    for why, names in (
        (_FILES, "load save from_file tofile"),
        (
            _MACHINERY,
            "ops hub utils cpp_extension jit compile classes library backends distributed multiprocessing"
            " package onnx export fx func autograd profiler testing get_device_module fork wait parse_ir"
            " parse_schema parse_type_comment merge_type_from_type_comment"
            " prepare_multiprocessing_environment",
        ),
        ("the app picks the device, not the chain", "cuda cpu mps xpu"),
        (
            _GLOBAL_STATE,
            "set_default_device set_default_dtype set_default_tensor_type manual_seed seed set_rng_state "
            "use_deterministic_algorithms set_num_threads set_printoptions autocast_increment_nesting "
            "autocast_decrement_nesting clear_autocast_cache init_num_threads",
        ),
        (
            _RAW_MEMORY,
            "numpy from_numpy frombuffer storage untyped_storage storage_type data_ptr as_strided set_ "
            "share_memory_ pin_memory record_stream",
        ),
        (_CALLBACKS, "register_hook apply_ map_ map2_"),
        (_CALLS_ANYTHING, "vmap cond while_loop scan associative_scan classproperty"),
        (
            "it copies to the host and makes the chain data-dependent Python; keep the result a tensor",
            "item tolist",
        ),
        ("string formatting can reach any attribute", "format format_map"),
        ("Tensor.type(name) imports modules by name; use .to(dtype) or .dtype", "type"),
        ("it walks class internals", "mro"),
    )
    for name in names.split()
}
"""Attribute names refused on any object, with why."""

_DENIED_PREFIXES: tuple[tuple[str, str], ...] = (("set_", _GLOBAL_STATE), ("as_strided", _RAW_MEMORY))
_DENIED_PARTS: tuple[tuple[str, str], ...] = (
    ("load", _FILES),
    ("save", _FILES),
    ("file", _FILES),
    ("pickle", _FILES),
    ("import", _MACHINERY),
    ("exec", _MACHINERY),
    ("hook", _CALLBACKS),
    ("torch_function", _CALLS_ANYTHING),
    ("seed", _GLOBAL_STATE),
    ("rng_state", _GLOBAL_STATE),
    ("data_ptr", _RAW_MEMORY),
)
"""Substrings that mark a family of names (``load_inline``, ``import_ir_module``, ...)."""

_TORCH_SUBMODULES = frozenset({"linalg", "fft", "special"})
_TORCH_REACH = (
    "only torch.<function>, torch.linalg/fft/special.<function>, F.<function> and nn.<Layer>(...) can be used"
)
_TORCH_VALUE = re.compile(
    r"(b?float|u?int|complex)\d+(_\w+)?|half|double|long|short|int|bool|cfloat|cdouble|chalf"
    r"|inf|nan|pi|e|newaxis|strided|sparse_coo|contiguous_format|preserve_format|channels_last(_3d)?",
    re.ASCII,
)
"""What ``torch.<name>`` may be when it is not called: dtypes, constants, layouts, memory formats.
Anything else (``torch.os``, ``torch.linalg``) could be a module, and a module passed around as a
value would escape the path rules below."""


def attribute_problem(name: str) -> str | None:
    """Why an attribute name is refused wherever it appears (the message's tail), or None."""
    if name.startswith("_"):
        return " (no dunder or private attributes)"
    why = (
        _DENIED.get(name)
        or next((why for prefix, why in _DENIED_PREFIXES if name.startswith(prefix)), None)
        or next((why for part, why in _DENIED_PARTS if part in name), None)
    )
    return f": {why}" if why else None


class AttributeCheck:
    """Checks whole attribute paths: what their root may be, each name, and the reach into torch."""

    def __init__(self, errors: NodeErrors, scope: Scope) -> None:
        self.errors = errors
        self.scope = scope

    def check_chain(self, outer: ast.Attribute, called: bool) -> None:
        """Check a whole chain ``root.x.y.z`` once, from its root outwards."""
        chain: list[ast.Attribute] = []
        node: ast.expr = outer
        while isinstance(node, ast.Attribute):
            chain.append(node)
            node = node.value
        chain.reverse()
        root = node
        if isinstance(root, ast.Constant):
            raise self.errors.at(root, "rejected", 'attributes of constants are not allowed (e.g. "...".format)')
        if isinstance(root, (ast.List, ast.Tuple)):
            raise self.errors.at(root, "rejected", "attributes of list and tuple displays are not allowed")
        if isinstance(root, ast.Name) and (root.id == "N" or root.id in ALLOWED_BUILTINS):
            raise self.errors.at(root, "rejected", f"attributes of '{root.id}' are not allowed")
        torch_root = root.id if isinstance(root, ast.Name) and root.id in ROOTS else None
        if isinstance(root, ast.Name) and root.id in self.scope.bound:
            raise self.errors.at(root, "rejected", f"'{root.id}' holds a layer: it {LAYER_ONLY_CALLED}")
        layer_path = torch_root is not None and (torch_root, *(a.attr for a in chain[:-1])) in LAYER_PATHS
        for attr in chain:
            problem = attribute_problem(attr.attr)
            if problem is None and torch_root and attr.attr[0].isupper():
                if layer_path and attr is chain[-1]:
                    self._layer_class(attr, called)
                    return
                problem = ": classes like torch.Tensor cannot be used"
            if problem:
                raise self.errors.at_attr(attr, f"attribute '{attr.attr}' is not allowed{problem}")
        if torch_root:
            self._torch_path(torch_root, chain, called)

    def _layer_class(self, attr: ast.Attribute, called: bool) -> None:
        """``nn.X`` / ``torch.nn.X``: an allowed layer, constructed."""
        if attr.attr not in LAYERS:
            raise self.errors.at_attr(
                attr, f"nn.{attr.attr} is not a layer a chain may construct; the layers are: {LAYER_NAMES}"
            )
        if not called:
            raise self.errors.at_attr(
                attr, f"nn.{attr.attr} can only be constructed and called, like nn.{attr.attr}(...)(x)"
            )

    def _torch_path(self, root: str, chain: list[ast.Attribute], called: bool) -> None:
        """On torch, F and nn, call only functions, through the few math submodules (and
        ``nn.functional``); else a dtype. (The layers, ``nn.X(...)``, are checked apart.)"""
        dotted = ".".join([root] + [attr.attr for attr in chain])
        if not called:
            if root != "torch" or len(chain) > 1 or not _TORCH_VALUE.fullmatch(chain[0].attr):
                raise self.errors.at_attr(chain[-1], f"'{dotted}' {TORCH_BARE}")
            return
        prefix = {"torch": ["torch"], "nn": ["torch", "nn"]}.get(root, ["torch", "nn", "functional"])
        path = prefix + [attr.attr for attr in chain]
        if len(path) > 2 and path[1] in _TORCH_SUBMODULES:
            limit = 3
        elif path[1:3] == ["nn", "functional"]:
            limit = 4
        else:
            limit = 2
        if len(path) > limit:
            raise self.errors.at_attr(chain[limit - len(prefix)], f"'{dotted}' is not allowed: {_TORCH_REACH}")
