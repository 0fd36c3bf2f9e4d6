"""The adapters of optional libraries (python/mxgate/adapters/: ml_dtypes, torch, triton,
triton_dot, jax; docs/python.md §11; test_triton_dot.py has triton_dot's own). Where the library
is absent (this CI: Debian's python3 has none of them) the adapter's module still imports and
the adapter raises mxgate.Unavailable naming the missing module; where it is present its casts
are held to the convention they claim and its GEMMs to the GEMM properties. Every skip is
decided by whether the module imports (and, for CUDA, whether torch sees a device), never by an
outcome."""

import importlib
import importlib.util

import pytest

import mxgate

# (module of mxgate.adapters, adapter class, modules it needs, needs a CUDA device)
ADAPTERS = [
    ("ml_dtypes", "MlDtypesAdapter", ("ml_dtypes",), False),
    ("torch", "TorchCpuAdapter", ("torch",), False),
    ("torch", "TorchCudaAdapter", ("torch",), True),
    ("torch", "ScaledMmAdapter", ("torch",), True),
    ("torch", "ScaledMmMxAdapter", ("torch",), True),
    ("triton", "TritonAdapter", ("torch", "triton"), True),
    ("triton_dot", "TritonDotAdapter", ("triton", "torch"), True),
    ("jax", "JaxAdapter", ("jax",), True),
    ("jax", "JaxScaledMatmulAdapter", ("jax",), True),
]
IDS = [c for _, c, _, _ in ADAPTERS]


def missing(modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def cuda_present():
    if missing(("torch",)):
        return False
    import torch

    return torch.cuda.is_available()


def adapter(module, cls):
    return getattr(importlib.import_module(f"mxgate.adapters.{module}"), cls)()


# Without its library the adapter imports, and says which module it needs instead of failing
# somewhere inside a run.
@pytest.mark.parametrize("module,cls,needs,cuda", ADAPTERS, ids=IDS)
def test_absent_library_is_unavailable_not_a_crash(module, cls, needs, cuda):
    absent = missing(needs)
    if not absent:
        pytest.skip(f"{', '.join(needs)} installed: the guard is not exercised")
    a = adapter(module, cls)
    with pytest.raises(mxgate.Unavailable, match=absent[0]):
        a.check_available()
    with pytest.raises(mxgate.Unavailable, match=absent[0]):
        mxgate.check("cast.bit_exact", a)


def present(module, cls, needs, cuda):
    absent = missing(needs)
    if absent:
        pytest.skip(f"{', '.join(absent)} not installed")
    if cuda and not cuda_present():
        pytest.skip("no CUDA device (torch.cuda.is_available())")
    return adapter(module, cls)


GEMM_ONLY = ("ScaledMmAdapter", "ScaledMmMxAdapter", "TritonDotAdapter", "JaxScaledMatmulAdapter")
CASTS = [a for a in ADAPTERS if a[1] not in GEMM_ONLY]


# A cast adapter that claims a convention equals it on the edges of every target format.
@pytest.mark.parametrize("module,cls,needs,cuda", CASTS, ids=[a[1] for a in CASTS])
def test_casts_against_their_claim(module, cls, needs, cuda):
    a = present(module, cls, needs, cuda)
    cast = a.find("cast")
    if cast.contract.convention is None:
        pytest.skip(f"{cls} claims no convention: only the survey compares it")
    r = mxgate.check("cast.bit_exact", a, op="cast", cases=200)
    assert r.passed, r


# e8m0 upcasts decode as their claim says (OCP: 2^(e-127), 0xFF NaN).
@pytest.mark.parametrize("module,cls,needs,cuda",
                         [a for a in ADAPTERS if a[1] in ("MlDtypesAdapter", "TorchCpuAdapter",
                                                          "TorchCudaAdapter")],
                         ids=["MlDtypesAdapter", "TorchCpuAdapter", "TorchCudaAdapter"])
def test_upcast_e8m0(module, cls, needs, cuda):
    a = present(module, cls, needs, cuda)
    if "upcast_e8m0" not in [o.name for o in a.ops]:
        pytest.skip(f"this {module} has no float8_e8m0fnu")
    r = mxgate.check("upcast_e8m0.bit_exact", a, op="upcast_e8m0", cases=100)
    assert r.passed, r


# The GEMM adapters on exact-mode data: any correct accumulator gives the exact result.
@pytest.mark.parametrize("module,cls,needs,cuda",
                         [a for a in ADAPTERS
                          if a[1] in ("ScaledMmAdapter", "TritonAdapter", "TritonDotAdapter")],
                         ids=["ScaledMmAdapter", "TritonAdapter", "TritonDotAdapter"])
def test_gemm_exact_mode(module, cls, needs, cuda):
    a = present(module, cls, needs, cuda)
    r = mxgate.check("gemm.exact", a, cases=50)
    assert r.passed, r


FP4_GEMMS = [a for a in ADAPTERS
             if a[1] in ("TritonAdapter", "JaxScaledMatmulAdapter", "ScaledMmMxAdapter")]


# The MX / NVFP4 GEMM adapters on exact-mode data (gemm_fp4.exact for the FP4 ops, gemm.exact for
# the MXFP8 ones); torch's MX / NVFP4 _scaled_mm, which needs sm_100 or later, is Unavailable
# with torch's own refusal on an older GPU.
@pytest.mark.parametrize("module,cls,needs,cuda", FP4_GEMMS, ids=[a[1] for a in FP4_GEMMS])
def test_mx_fp4_gemm_exact_mode(module, cls, needs, cuda):
    a = present(module, cls, needs, cuda)
    if cls == "ScaledMmMxAdapter":
        import torch

        if torch.cuda.get_device_capability() < (10, 0):
            with pytest.raises(mxgate.Unavailable, match="runs none of its MX / NVFP4"):
                a.check_available()
            return
    for prop in ("gemm_fp4.exact", "gemm.exact"):
        r = mxgate.check(prop, a, cases=50)
        assert r.passed, r
