"""The libraries' own fp32 -> fp8 / e8m0 cast on the GPU over all 2^32 fp32 bit patterns, timed
alone: inputs made on the device outside the clock, in chunks of 2^28 as mxgate's device cast
sweep hands them to an op (gpu/kernels/cast_sweep), the same jitted function the JAX adapter
calls (x.astype(t) bitcast to uint8), and torch's x.to(t) for comparison. The device sweep of an
adapter cannot be faster than its library's cast: these figures are the floor the survey's sweep
seconds are read against (docs/python.md §14.2). Prints one line per library and format."""

import time

ALL, CHUNK = 1 << 32, 1 << 28


def jax_times():
    import jax
    import jax.numpy as jnp

    from mxgate.adapters._library import float8_types

    gpu = jax.devices("gpu")[0]
    bits = jax.lax.bitcast_convert_type
    for name, t in float8_types(jnp).items():
        cast = jax.jit(lambda v, t=t: bits(v.astype(t), jnp.uint8))
        make = jax.jit(lambda lo: bits(lo + jnp.arange(CHUNK, dtype=jnp.uint32), jnp.float32))
        cast(make(jnp.uint32(0))).block_until_ready()  # compile outside the clock
        spent = 0.0
        for lo in range(0, ALL, CHUNK):
            x = jax.device_put(make(jnp.uint32(lo)), gpu).block_until_ready()
            t0 = time.perf_counter()
            cast(x).block_until_ready()
            spent += time.perf_counter() - t0
        print(f"jax {jax.__version__} {name}: {spent:.3f} s", flush=True)


def torch_times():
    import torch

    types = {"e4m3fn": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
             "e4m3fnuz": torch.float8_e4m3fnuz, "e5m2fnuz": torch.float8_e5m2fnuz,
             "e8m0": getattr(torch, "float8_e8m0fnu", None)}
    for name, t in types.items():
        if t is None:
            continue
        base = torch.arange(CHUNK, dtype=torch.int64, device="cuda")
        torch.zeros(4, device="cuda").to(t)
        torch.cuda.synchronize()
        spent = 0.0
        for lo in range(0, ALL, CHUNK):
            x = (base + lo).to(torch.int32).view(torch.float32)  # wraps like uint32
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            x.to(t)
            torch.cuda.synchronize()
            spent += time.perf_counter() - t0
        print(f"torch {torch.__version__} cuda {name}: {spent:.3f} s", flush=True)


for f in (jax_times, torch_times):
    try:
        f()
    except Exception as e:  # a library missing here is a line of the log, not a stop
        print(f"{f.__name__}: {type(e).__name__}: {e}", flush=True)
