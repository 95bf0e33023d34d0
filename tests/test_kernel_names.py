"""Readable kernel names and the real-kernel filter: what a user reads in every row."""

from __future__ import annotations

import pytest

from probes.link.kernel_names import classify_device_event, fused_ops, is_cpu_work_op, short_name

ADD = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >"
    "(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"
)
CLAMP = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
    "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
    "const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::)"
)
MUL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
    "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int)"
)
SUM = (
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
    "unsigned int, float, 4, 4> >(at::native::ReduceOp<float>)"
)
COPY = (
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
    "TensorListMetadata<2>, at::native::(anonymous namespace)::CopyFunctor<float, float, 2, 1, 1>, "
    "at::native::(anonymous namespace)::Copy<float, float> >(int)"
)


@pytest.mark.parametrize(
    ("name", "short"),
    [
        (ADD, "vectorized_elementwise_kernel<add>"),
        (CLAMP, "vectorized_elementwise_kernel<clamp_scalar>"),
        (MUL, "vectorized_elementwise_kernel<Mul>"),
        (SUM, "reduce_kernel<sum>"),
        (COPY, "multi_tensor_apply_kernel<Copy>"),
        ("triton_poi_fused_add_relu_0", "triton_poi_fused_add_relu_0"),
        ("graph_0_cpp_fused_add_relu_0", "cpp_fused_add_relu_0"),
        ("aten::clamp_min", "aten::clamp_min"),
        ("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT", "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT"),
    ],
)
def test_short_names_are_readable(name: str, short: str) -> None:
    assert short_name(name) == short


def test_short_names_never_empty_and_bounded() -> None:
    for name in (ADD, CLAMP, MUL, SUM, COPY, "void foo<(anonymous namespace)::x>()", "x" * 500):
        text = short_name(name)
        assert text and len(text) <= 60


def test_memcpy_and_memset_are_not_kernels() -> None:
    assert classify_device_event("Memcpy DtoD (Device -> Device)") == "memcpy"
    assert classify_device_event("Memset (Device)") == "memset"
    assert classify_device_event(ADD) == "kernel"


def test_cpu_work_ops_exclude_bookkeeping() -> None:
    assert is_cpu_work_op("aten::add") and is_cpu_work_op("graph_0_cpp_fused_add_relu_0")
    for op in ("aten::empty", "aten::view", "aten::resolve_conj", "aten::as_strided", "Torch-Compiled Region: 0/0"):
        assert not is_cpu_work_op(op)


def test_fused_ops_from_inductor_names() -> None:
    assert fused_ops("triton_poi_fused_add_relu_0") == ["add", "relu"]
    assert fused_ops("graph_0_cpp_fused_mul_sum_1") == ["mul", "sum"]
    assert fused_ops(ADD) == []
