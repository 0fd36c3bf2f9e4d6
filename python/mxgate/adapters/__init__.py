"""Adapters shipped with mxgate (docs/python.md §11): real implementations wrapped in mxgate's
implementation model, each module import-guarded (importing it never needs the library it
wraps; using an adapter whose library is absent raises mxgate.Unavailable naming it).

    numpy          numpy matmul of dequantized operands (gemm_mx, gemm_block, gemm_bf16), the e8m0
                   upcast and MX dequantization, written from the format specifications;
                   NumpyFp4Adapter: MXFP4 / NVFP4 dequantization and GEMMs (packed E2M1)
    numpy_faulty   the same with one planted fault each (the proof that the properties catch them)
    ml_dtypes      numpy casts to ml_dtypes' float8 / e8m0 / float4_e2m1fn / float6_* types
    torch          torch casts on CPU and CUDA; torch._scaled_mm per-tensor, rowwise,
                   1x128 x 128x128; ScaledMmMxAdapter: _scaled_mm with MXFP8 / MXFP4 / NVFP4 scales (sm_100+)
    triton         casts in a Triton kernel; tl.dot_scaled with MXFP8 and e2m1 (MXFP4) operands
    triton_dot     Triton FP8 tl.dot GEMM with per-tensor scales, one op per tile configuration
                   (tactic), each declaring its accumulator model
    jax            casts on the GPU through XLA; jax.nn.scaled_matmul MXFP8 / NVFP4 GEMMs

SHIPPED lists every adapter as py:MODULE:OBJECT specs (what `mxgate survey` offers).
"""

SHIPPED = (
    "py:mxgate.adapters.numpy:NumpyAdapter",
    "py:mxgate.adapters.numpy_faulty:ScaleTransposed",
    "py:mxgate.adapters.numpy_faulty:DropTrailingK",
    "py:mxgate.adapters.numpy_faulty:ShiftE8m0",
    "py:mxgate.adapters.numpy_faulty:ActScalesColMajor",
    "py:mxgate.adapters.numpy_faulty:E8m0NanAsInf",
    "py:mxgate.adapters.numpy_faulty:E8m0NanAsMax",
    "py:mxgate.adapters.numpy:NumpyFp4Adapter",
    "py:mxgate.adapters.numpy_faulty:Fp4NibbleSwapped",
    "py:mxgate.adapters.numpy_faulty:Nvfp4GlobalTwice",
    "py:mxgate.adapters.ml_dtypes:MlDtypesAdapter",
    "py:mxgate.adapters.torch:TorchCpuAdapter",
    "py:mxgate.adapters.torch:TorchCudaAdapter",
    "py:mxgate.adapters.torch:ScaledMmAdapter",
    "py:mxgate.adapters.torch:ScaledMmMxAdapter",
    "py:mxgate.adapters.triton:TritonAdapter",
    "py:mxgate.adapters.triton_dot:TritonDotAdapter",
    "py:mxgate.adapters.jax:JaxAdapter",
    "py:mxgate.adapters.jax:JaxScaledMatmulAdapter",
)


def require(module, what):
    """Imports `module` for adapter `what`, or raises mxgate.Unavailable naming it."""
    import importlib

    from ..adapter import Unavailable

    try:
        return importlib.import_module(module)
    except Exception as e:  # ImportError, or a broken install raising anything at import
        raise Unavailable(f"{what} needs {module}: {type(e).__name__}: {e}") from None
