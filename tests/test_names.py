"""Readable kernel names (issue 16): decoders/names.py short_name on real PyTorch, CUTLASS,
cuBLAS, Triton and XLA names (as c++filt prints them), the report's use of it, and the
300-character line limit."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT
from decoders.cuda.attribute import describe
from decoders.names import short_name
from decoders.text import MAX_LINE

# (demangled, short): names as PyTorch 2.x, CUTLASS 3, cuBLAS, Triton and XLA kernels
# demangle (c++filt), the short name as Nsight Systems shows it by default.
TORCH_FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
              "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
              "at::detail::Array<char*, 1>)")
TORCH_COPY = ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<"
              "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
              "operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>("
              "at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
              "::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::"
              "{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<"
              "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
              "operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>("
              "at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
              "::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::"
              "{lambda(float)#1} const&)::{lambda(int)#1})")
CASES = [
    (TORCH_FILL, "vectorized_elementwise_kernel"),
    (TORCH_COPY, "elementwise_kernel"),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 9, false, false>("
     "float*, float const*, int, int, int, bool const*, int, bool)", "softmax_warp_forward"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::"
     "func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()("
     "at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::"
     "ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
     "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
     "reduce_kernel"),
    ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>("
     "cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)", "Kernel2"),
    ("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int,"
     " int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarp"
     "Specialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, cutlass::gemm::Kernel"
     "TmaWarpSpecializedCooperative>, void, void> > >(cutlass::gemm::kernel::GemmUniversal<"
     "cute::tuple<int, int, int, int>, void>::Params)", "device_kernel"),
    ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
     "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensor"
     "StridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemv"
     "ParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched"
     "<float const>, cublasGemvTensorStridedBatched<float>, float>, float, float)",
     "gemv2T_kernel_val"),
    ("triton_poi_fused_add_0", "triton_poi_fused_add_0"),          # extern "C": as it is
    ("input_reduce_fusion_1", "input_reduce_fusion_1"),            # XLA
    ("vadd(float const*, float const*, float*, int)", "vadd"),
    ("vadd", "vadd"),
    ("void ns::kern<(Mode)2>(int)", "kern"),
    ("bool Foo<int>::operator<(Foo<int> const&) const", "operator<"),
    ("void ns::kern<(int)-1>(decltype ({parm#1}->x))", "kern"),
    ("unbalanced<(int", "unbalanced<(int"),                        # not parsed: kept whole
]


@pytest.mark.parametrize("full,short", CASES, ids=[c[1] for c in CASES])
def test_short_name(full, short):
    assert short_name(full) == short
    assert short_name(short_name(full)) == short           # stable


def test_short_name_none():
    assert short_name(None) is None and short_name("") == ""


def _attr(name):
    return {"api_call": {"name": "cuLaunchKernel", "index": 7}, "verified": True,
            "checked": ["grid", "block"], "kernel": {"name": name, "mangled": "_Zx"}}


def test_describe_short_and_full():
    assert describe(_attr(TORCH_COPY)) == \
        "cuLaunchKernel (record 7) -> elementwise_kernel: verified (grid, block)"
    assert TORCH_COPY in describe(_attr(TORCH_COPY), full_names=True)


def test_report_lines_at_most_300(tmp_path):
    """A capture whose argv holds a 5,145-character argument and whose NOTE is 3,000
    characters: no line of the text report (any view) passes 300 characters, and the
    elision shows the true length."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_untrusted_text import _record
    from conftest import capture_bytes
    import struct
    from decoders.capture import format as F
    data = bytearray(capture_bytes("runtime-vadd"))
    fixed = F.TL_FILE_HEADER_PREFIX.parse(data[:F.TL_FILE_HEADER_FIXED])
    at = F.TL_FILE_HEADER_FIXED
    meta = json.loads(bytes(data[at:at + fixed.meta_len]))
    meta["argv"] = meta["argv"] + ["a" * 1500]
    new = json.dumps(meta).encode()
    data[at:at + fixed.meta_len] = bytes(fixed.meta_len)
    data[at:at + len(new)] = new
    struct.pack_into("<I", data, 0x30, len(new))
    end_at = bytes(data).rfind(struct.pack("<I", F.TL_RECORD_SYNC))
    text = b"n" * 3000
    out = bytearray(bytes(data[:end_at]) + _record("NOTE", dict(level=1, text_len=len(text)), text)
                    + bytes(data[end_at:]))
    struct.pack_into("<Q", out, F.TL_CURSOR_OFFSET, len(out))
    p = tmp_path / "synthetic-long.tlc"
    p.write_bytes(bytes(out))
    for args in ([], ["--ioctls"], ["--objects"], ["--stats"], ["--cost"]):
        r = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", str(p), *args],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert max(map(len, lines)) <= MAX_LINE, max(lines, key=len)[:400]
        if not args:
            assert "...[1500 chars]" in r.stdout
            assert "...[3000 chars]" in r.stdout
