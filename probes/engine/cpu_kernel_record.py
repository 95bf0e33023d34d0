"""Inductor's C++ kernels, named in the profiler, built without the header that makes them slow.

With ``cpp.enable_kernel_profile`` each C++ kernel opens a profiler range named after it
(``graph_N_cpp_fused_*``) through ``torch::aot_inductor::RAIIAtenRecordFunctionHandle`` from
``aoti_runtime/utils.h``. Compiling that header and the handle's templates is what the range
costs: a new chain's compile and first run take a tenth longer than a user's own, and no longer
with the same range declared from the C shim alone (docs/performance.md). Around the tool's own compiles on
the CPU, each kernel's source is built with that light declaration instead: a plain object whose
two shim calls open and close the same range; the kernel's body is untouched. The source the tool
shows is Inductor's, as its wrapper module holds it.

A fast path (``probes.link.fast_paths``); without it, the kernels are built as Inductor writes
them. How the source reaches Inductor's code cache is torch's own
(``probes.engine.torch_compat.rewriting_cpp_kernels``).
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path

from probes.engine import torch_compat
from probes.link import fast_paths

HEAVY_INCLUDE = "#include <torch/csrc/inductor/aoti_runtime/utils.h>\n"
HEAVY_RECORD = "torch::aot_inductor::RAIIAtenRecordFunctionHandle "
SHIM_HEADER = "torch/csrc/inductor/aoti_torch/c/shim.h"

LIGHT_INCLUDE = f"""#include <{SHIM_HEADER}>
namespace kernel_tui {{
struct KernelRecord {{
    AtenRecordFunctionHandle handle = nullptr;
    KernelRecord(const char* name, IValueMapHandle kwargs) {{
        aoti_record_function_start(name, kwargs, nullptr, 0, &handle);
    }}
    KernelRecord(const KernelRecord&) = delete;
    ~KernelRecord() {{ if (handle) aoti_record_function_end(handle); }}
}};
}}
"""
LIGHT_RECORD = "kernel_tui::KernelRecord "


def light_record_source(source: str) -> str:
    """``source`` with its kernels' profiler ranges declared from the C shim; unchanged where it
    has no such range (built without the kernel profile), where a range is opened otherwise than
    by name alone (the light one has no other form), or where this torch lacks the shim's calls."""
    ranges = source.count(HEAVY_RECORD)
    by_name_alone = (
        ranges > 0
        and HEAVY_INCLUDE in source
        and torch_compat.cpp_ranges_opened_by_name(source, HEAVY_RECORD) == ranges
    )
    if not by_name_alone or not _shim_has_record_calls():
        return source
    return source.replace(HEAVY_INCLUDE, LIGHT_INCLUDE, 1).replace(HEAVY_RECORD, LIGHT_RECORD)


@functools.cache
def _shim_has_record_calls() -> bool:
    """Whether this torch's C shim declares the two calls the light range makes."""
    import torch

    shim = Path(torch.__file__).parent / "include" / SHIM_HEADER
    if not shim.is_file():
        return False
    text = shim.read_text(errors="replace")
    return "aoti_record_function_start(" in text and "aoti_record_function_end(" in text


def light_kernel_records() -> contextlib.AbstractContextManager[None]:
    """For the duration of the block, C++ kernels given to Inductor's code cache are built with
    ``light_record_source`` (the cache's key is the source built, so a user's own compile of the
    same kernel keeps its own entry); as Inductor writes them where the fast paths are off."""
    if not fast_paths.enabled("cpu_kernel_record"):
        return contextlib.nullcontext()
    return torch_compat.rewriting_cpp_kernels(light_record_source)
