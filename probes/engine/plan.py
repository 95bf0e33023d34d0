"""The pipeline's first stage: what a request measures, planned before anything runs.

Once per request (``plan_request``): the settings checked as every front end checks them, the
device resolved, the chain parsed or the user's file imported, and what every later stage needs
to know of it (what its compiled code is cached by, the parameters a training step
differentiates). Once per size (``plan_size``): the inputs specified, the memory guard's meta
trace (``probes.engine.memory_guard``: a size that would not fit is refused before anything is
allocated), then the inputs made. Later stages (``probes.engine.compiling``'s ``prepare``,
``probes.engine.measure``, ``probes.engine.attribute``) take a ``SizePlan`` and never come back
here.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from probes.chain.expr import ChainError, ParsedChain, parse_chain
from probes.engine.devices import resolve_device
from probes.engine.errors import MeasureError
from probes.engine.inputs import InputSpec, input_specs, make_inputs
from probes.engine.memory_guard import check_memory
from probes.engine.trace import OpTrace
from probes.engine.user_source import SourceChain, load_source, located, stopped_in
from probes.engine.watchdog import CallOverBudget
from probes.link.protocol import ChainErrorInfo, ProfileRequest


@dataclass(frozen=True)
class RequestPlan:
    """A request ready to sweep: its chain on its device, each mode once."""

    request: ProfileRequest
    chain: ParsedChain
    device: torch.device
    modes: list[str]
    """The request's modes in order, each once (``eager,eager`` measures once)."""
    identity: str
    """What the chain's compiled code is cached by: its text, or for a user's file the name, the
    hashes of every file it came from and the dtype."""
    parameters: tuple[torch.Tensor, ...]
    """What a training step differentiates besides the inputs (a user's module's parameters)."""

    @property
    def source(self) -> SourceChain | None:
        """The user's file measured, or None for a chain."""
        return self.chain if isinstance(self.chain, SourceChain) else None


@dataclass(frozen=True)
class SizePlan:
    """One size of a request, planned: its inputs made and, where the guard could run, the
    chain's meta trace. What the later stages measure."""

    chain: ParsedChain
    identity: str
    parameters: tuple[torch.Tensor, ...]
    n: int
    device: torch.device
    dtype: str
    grad: bool
    reps: int | None
    inputs: list[torch.Tensor]
    trace: OpTrace | None
    """The chain's ops sized on meta (None where the guard could not run a user's code there)."""


def plan_request(request: ProfileRequest) -> RequestPlan:
    """The request's chain on its device; ChainError or MeasureError (one line) when the chain,
    a setting or the user's file cannot be measured at any size."""
    parsed = parse_chain(request.chain) if request.source is None else None
    invalid = request.invalid()  # the settings model's limits, as every front end checks them
    if invalid:
        raise MeasureError(ChainErrorInfo("input", invalid))
    device = resolve_device(request.device)
    chain = parsed
    if chain is None:
        assert request.source is not None
        chain = load_source(request.source, device, request.dtype, request.grad, request.chain)
    source = chain if isinstance(chain, SourceChain) else None
    return RequestPlan(
        request=request,
        chain=chain,
        device=device,
        modes=list(dict.fromkeys(request.modes)),
        identity=source.identity if source is not None else chain.text,
        parameters=source.parameters if source is not None else (),
    )


def plan_size(plan: RequestPlan, n: int) -> SizePlan:
    """Size ``n`` of the request: the memory guard, then the inputs. Raises ChainError (a chain
    that cannot run at this size), MeasureError (it would not fit) or torch's out-of-memory."""
    request = plan.request
    specs = input_specs(plan.chain, n, request.dtype)
    trace = _guard(plan, specs, n)
    # Not under the device lock: filling them is a few short kernels, and a compile worker that
    # waited here would start its compile only after the eager measurement of the same edit.
    inputs = make_inputs(specs, plan.device, n)
    return SizePlan(
        chain=plan.chain,
        identity=plan.identity,
        parameters=plan.parameters,
        n=n,
        device=plan.device,
        dtype=request.dtype,
        grad=request.grad,
        reps=request.reps,
        inputs=inputs,
        trace=trace,
    )


def _guard(plan: RequestPlan, specs: list[InputSpec], n: int) -> OpTrace | None:
    """The memory guard's meta trace. For a user's file, code that cannot run on meta is not
    refused: the guard is skipped (each measurement says so) and the runtime checks alone stand
    guard; an error the code would hit on the device is reported at its line in the file."""
    source = plan.source
    if source is None:
        return check_memory(plan.chain, specs, n, plan.device)
    if source.on_meta is None:
        source.note_unguarded("it cannot be built on meta tensors")
        return None
    try:
        return check_memory(source, specs, n, plan.device)
    except CallOverBudget as exc:
        raise ChainError(stopped_in(source, exc)) from None
    except ChainError as exc:
        if exc.info.kind == "rejected":
            source.note_unguarded("it reads a tensor's values in Python")
            return None
        if exc.info.kind == "memory":  # an op without a meta kernel: "'aten::x' cannot run on meta tensors, ..."
            source.note_unguarded(exc.info.message.split(",")[0])
            return None
        raise ChainError(located(source, exc)) from None
