"""The GPU's context made by the driver while torch imports: on a thread, in the context torch then
uses; nothing where there is no driver, and a failing step ends it quietly."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
import torch

from probes.engine.driver_context import CUDA_SUCCESS, make_primary_context, start_driver_context


class FakeDriver:
    """libcuda's three calls, recorded with the thread that made them; ``failing`` answers 100."""

    def __init__(self, failing: str | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.failing = failing

    def __getattr__(self, name: str):
        def call(*args: object) -> int:
            self.calls.append((name, threading.current_thread().name))
            return 100 if name == self.failing else CUDA_SUCCESS

        return call


def test_no_driver_starts_nothing() -> None:
    def missing(name: str) -> object:
        raise OSError(f"{name}: cannot open shared object file")

    assert start_driver_context(load=missing) is None


def test_the_context_is_made_on_a_thread_of_its_own() -> None:
    driver = FakeDriver()
    thread = start_driver_context(load=lambda name: driver)
    assert thread is not None
    thread.join()
    assert driver.calls == [(name, "driver-context") for name in ("cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain")]


@pytest.mark.parametrize("failing", ["cuInit", "cuDeviceGet"])
def test_a_failing_step_ends_it_without_the_next(failing: str) -> None:
    driver = FakeDriver(failing)
    assert make_primary_context(driver) is None
    assert [name for name, _ in driver.calls][-1] == failing and "cuDevicePrimaryCtxRetain" not in [
        n for n, _ in driver.calls
    ]


TORCH_USES_IT = """
import ctypes
from probes.engine.driver_context import make_primary_context, start_driver_context
start_driver_context().join()
lib = ctypes.CDLL("libcuda.so.1")
flags, active = ctypes.c_uint(), ctypes.c_int()
lib.cuDevicePrimaryCtxGetState(0, ctypes.byref(flags), ctypes.byref(active))
assert active.value == 1, "no primary context after the driver's thread"
made = make_primary_context(lib)
import torch
torch.ones(1, device="cuda").add_(1)
torch.cuda.synchronize()
current = ctypes.c_void_p()
lib.cuCtxGetCurrent(ctypes.byref(current))
assert current.value == made.value, (current.value, made.value)
print("same context")
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_torch_measures_in_the_context_the_driver_made() -> None:
    out = subprocess.run([sys.executable, "-c", TORCH_USES_IT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "same context" in out.stdout, out.stderr[-2000:]


def test_importing_the_worker_leaves_torch_to_its_main() -> None:
    """The worker's main starts the thread first: it is only worth it beside torch's import."""
    out = subprocess.run(
        [sys.executable, "-c", "import sys, probes.engine.worker; print('torch' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == "False", out.stderr[-2000:]
