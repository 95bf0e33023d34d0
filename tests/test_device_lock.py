"""One measurement at a time on a device, across processes; a compile on a GPU lets the device go
except for Inductor's own benchmarks."""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from probes.engine import device_lock
from probes.engine.device_lock import compiling, measuring, release_all


@pytest.fixture(autouse=True)
def _own_locks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("KERNEL_TUI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(device_lock, "_locks", {})
    yield
    release_all()


def taken_elsewhere(device: object) -> bool:
    """Whether another holder (another open file, as another process has) finds the lock taken."""
    fd = os.open(device_lock.device_lock(device).path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_measurement_holds_its_device_and_only_its_device() -> None:
    assert not taken_elsewhere("cpu")
    with measuring("cpu"):
        assert taken_elsewhere("cpu")
        assert not taken_elsewhere("cuda:0")
        with measuring(torch.device("cpu")):  # re-entrant: the same lock, still held after the inner block
            pass
        assert taken_elsewhere("cpu")
    assert not taken_elsewhere("cpu")


def test_a_compile_on_the_cpu_keeps_the_device() -> None:
    """Its host work is on the cores a CPU measurement times."""
    with measuring("cpu"), compiling(torch.device("cpu")):
        assert taken_elsewhere("cpu")


def test_a_compile_on_a_gpu_lets_the_device_go_but_its_benchmarks_take_it_back() -> None:
    gpu = torch.device("cuda", 0)  # no CUDA needed: nothing runs on it here
    seen: list[bool] = []
    with measuring(gpu):
        with compiling(gpu):
            assert not taken_elsewhere(gpu)  # the other worker may measure while this one compiles
            device_lock._guarded(lambda: seen.append(taken_elsewhere(gpu)))()
            assert not taken_elsewhere(gpu)
        assert taken_elsewhere(gpu)  # held again for the compiled call's own measurement
    assert seen == [True]


def test_inductors_benchmarker_is_guarded_once() -> None:
    from torch._inductor.runtime.benchmarking import benchmarker

    with compiling(torch.device("cuda", 0)):
        guarded = benchmarker.benchmark_gpu
    with compiling(torch.device("cuda", 0)):
        assert benchmarker.benchmark_gpu is guarded  # not wrapped again with each compile
    assert guarded.__name__ == "locked_benchmark"


def test_whatever_a_stopped_request_left_held_is_let_go_between_requests() -> None:
    lock = device_lock.device_lock("cpu")
    entered = lock.measuring()
    entered.__enter__()  # a stop landed before the block's end: never exited
    assert taken_elsewhere("cpu")
    release_all()
    assert not taken_elsewhere("cpu")
    with measuring("cpu"):  # and it works as before
        assert taken_elsewhere("cpu")
    assert not lock.held


def test_a_hold_that_ends_after_everything_was_let_go_leaves_the_next_measurement_holding() -> None:
    """A thread of the worker (the profiler's set-up) may still hold the device when a stopped
    request lets everything go; its hold ending after that must not leave the count below zero,
    where the next measurement would take nothing."""
    entered = measuring("cpu")
    entered.__enter__()  # the set-up thread's hold
    release_all()  # the stopped request's end
    entered.__exit__(None, None, None)  # the set-up ends after it
    with measuring("cpu"):
        assert taken_elsewhere("cpu")
    assert not taken_elsewhere("cpu")


def test_a_thread_that_lets_the_device_go_keeps_another_threads_hold() -> None:
    """A compile lets go of its thread's holds only: the profiler's set-up, on a thread of its own
    beside it, keeps the device until it is done."""
    lock = device_lock.device_lock("cpu")
    inside, leave = threading.Event(), threading.Event()

    def set_up() -> None:
        with lock.measuring():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=set_up)
    thread.start()
    assert inside.wait(10)
    with lock.measuring(), lock.released():  # a compile
        assert taken_elsewhere("cpu")
        leave.set()
        thread.join(10)
        assert not taken_elsewhere("cpu")  # the set-up is done: the compile holds nothing
    assert not lock.held and not taken_elsewhere("cpu")


@pytest.mark.slow
def test_a_measurement_holds_the_device_while_timing_but_a_compile_starts_without_waiting_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The compile worker's compile must not wait for the eager worker's measurement of the same
    edit (the lock is taken after the compile); its timed calls hold the device."""
    from probes.engine import compiling as compiling_module
    from probes.engine import measure as measure_module
    from probes.engine.sweep import run_profile
    from probes.link.protocol import MeasurementResult, ProfileRequest

    held_at: dict[str, list[bool]] = {"compile": [], "wall": []}
    compile, wall = compiling_module._compile, measure_module.measure_wall_time

    def spy_compile(*args, **kwargs):
        held_at["compile"].append(device_lock.device_lock("cpu").held)
        return compile(*args, **kwargs)

    def spy_wall(*args, **kwargs):
        held_at["wall"].append(device_lock.device_lock("cpu").held and taken_elsewhere("cpu"))
        return wall(*args, **kwargs)

    monkeypatch.setattr(compiling_module, "_compile", spy_compile)
    monkeypatch.setattr(measure_module, "measure_wall_time", spy_wall)
    events: list = []
    run_profile(
        ProfileRequest("l1", "(a - b).abs() * 3", sizes=[512], modes=["eager", "compiled"], device="cpu"), events.append
    )
    assert [e.measurement.mode for e in events if isinstance(e, MeasurementResult)] == ["eager", "compiled"]
    assert held_at == {"compile": [False], "wall": [True, True]}
    assert not taken_elsewhere("cpu")  # let go once the request is done


@pytest.mark.slow
def test_the_compilers_import_holds_the_cpu_but_not_a_gpu() -> None:
    """A compile worker imports Dynamo and Inductor before its first compile; on the CPU that is
    work on the cores the other worker's eager measurement times (its ops would read a hundred
    times slower on a small machine), on a GPU it is host work beside the device."""
    from probes.engine.sweep import run_profile
    from probes.link.protocol import ProfileRequest

    for device, held in (("cpu", True), ("cuda:0", False)):
        with device_lock.importing_compiler(torch.device(device)):
            assert taken_elsewhere(device) is held
    imports: list[bool] = []
    run_profile(
        ProfileRequest("l2", "(a - b).abs() * 5", sizes=[512], modes=["eager", "compiled"], device="cpu"),
        lambda event: None,
        before_compile=lambda step: imports.append(taken_elsewhere("cpu")),
    )
    assert imports == [True]


def test_a_cache_directory_that_cannot_be_used_costs_the_lock_not_the_measurement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("KERNEL_TUI_CACHE_DIR", str(blocked))
    with measuring("cpu"), compiling(torch.device("cpu")):
        assert device_lock.device_lock("cpu").path is None


def test_a_gpu_another_process_timed_on_a_moment_ago_is_not_warmed_up_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's compile worker times a new chain's compiled call a few hundred ms after the eager
    worker timed the same edit's eager rows on the GPU: its clocks are up, and a warm-up would hold
    the compiled rows 25 ms (probes.engine.timing.WARM_FOR_S). Another GPU is still warmed up."""
    import subprocess
    import sys
    import time

    from probes.engine import timing

    monkeypatch.setattr(timing, "_last_timed", float("-inf"))
    gpu, other = torch.device("cuda", 3), torch.device("cuda", 2)
    assert timing.needs_warm_up(gpu, time.time())
    mark = "from probes.engine.device_lock import device_lock; device_lock('cuda:3').mark_timed()"
    subprocess.run([sys.executable, "-c", mark], env={**os.environ, "KERNEL_TUI_CACHE_DIR": str(tmp_path)}, check=True)
    now = time.time()
    assert not timing.needs_warm_up(gpu, now)
    assert timing.needs_warm_up(gpu, now + timing.WARM_FOR_S)
    assert timing.needs_warm_up(other, now)


def test_noting_the_timed_reps_end_keeps_the_device_held() -> None:
    """The reps' end is noted while the measurement still holds the device: the note opens the
    lock's file again, and closing that must not let the measurement's lock go."""
    with measuring("cuda:3"):
        device_lock.device_lock("cuda:3").mark_timed()
        assert taken_elsewhere("cuda:3")
    assert not taken_elsewhere("cuda:3")


HOLDER = """\
import time
from probes.engine.device_lock import device_lock
with device_lock("cpu").measuring():
    print("held", flush=True)
    time.sleep(600)
"""


def hold_cpu_elsewhere(cache: Path) -> subprocess.Popen[str]:
    """Another process that holds the CPU's lock (as a second kernel-tui measuring) until killed."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        env={**os.environ, "KERNEL_TUI_CACHE_DIR": str(cache)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def end(holder: subprocess.Popen[str]) -> None:
    """kill -9: its flock goes with it, whatever its note beside the lock still says."""
    holder.kill()
    holder.wait()
    if holder.stdout is not None:
        holder.stdout.close()


def test_a_wait_for_a_device_another_process_holds_says_who_and_since_when(tmp_path: Path) -> None:
    holder = hold_cpu_elsewhere(tmp_path)
    said: list[str | None] = []
    held: list[bool] = []

    def measure() -> None:
        with measuring("cpu"):
            held.append(taken_elsewhere("cpu"))

    try:
        with device_lock.saying_waits(said.append):
            waiter = threading.Thread(target=measure)
            waiter.start()
            deadline = time.monotonic() + 5
            while not said and time.monotonic() < deadline:
                time.sleep(0.02)
            assert said and said[0] is not None
            assert re.fullmatch(
                rf"waiting for cpu: \S+ \(pid {os.getpid()}\) measures there since \d\d:\d\d:\d\d", said[0]
            ), said[0]
            holder.kill()
            waiter.join(5)
            assert not waiter.is_alive() and said[1:] == [None] and held == [True]
    finally:
        end(holder)


def test_a_holder_killed_leaves_no_wait_behind(tmp_path: Path) -> None:
    end(hold_cpu_elsewhere(tmp_path))
    said: list[str | None] = []
    with device_lock.saying_waits(said.append), measuring("cpu"):
        assert taken_elsewhere("cpu")
    assert said == []


@pytest.mark.slow
def test_the_headless_command_says_once_who_holds_the_device_and_measures_once_it_is_free(tmp_path: Path) -> None:
    holder = hold_cpu_elsewhere(tmp_path / "cache")
    env = {**os.environ, "KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"), "KERNEL_TUI_STATE_DIR": str(tmp_path)}
    argv = ["profile", "a + b", "--device", "cpu", "--sizes", "1e3,1e4", "--modes", "eager", "--json"]
    try:
        with subprocess.Popen(
            [str(Path(sys.executable).with_name("kernel-tui")), *argv],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as profile:
            assert profile.stderr is not None
            line = profile.stderr.readline()
            assert re.fullmatch(
                rf"waiting for cpu: \S+ \(pid {os.getpid()}\) measures there since \d\d:\d\d:\d\d; ctrl\+c to stop\n",
                line,
            ), line
            holder.kill()
            out, err = profile.communicate(timeout=120)
            assert profile.returncode == 0, err
            assert "waiting" not in err  # said once
            assert len(json.loads(out)["results"]) == 2
    finally:
        end(holder)
