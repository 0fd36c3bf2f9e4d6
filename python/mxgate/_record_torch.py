"""The flight recorder's torch operator hook (docs/record.md §2): a TorchDispatchMode that
sees every dispatcher op (aten, torch.ops._C.*, torch.ops.vllm.* custom ops) and records those
it has a declaration for: aten._scaled_mm (.default, .out) with the known binding, and any op
the hooks name as "torch.ops.NS.NAME" with an mxgate declaration of its adapter form.

Imported only when recording with dispatch=True on a host with torch; nothing here imports
torch at module level. Under torch.compile the mode sees only the ops the compiled code calls
through the dispatcher (never a Triton kernel Inductor generated); under CUDA graphs only the
capture-time call (a replay runs no Python).
"""

from ._record_bind import OpBinding, ScaledMmBinding, declaration_of


def op_name(func):
    """"torch.ops.NS.NAME" of an OpOverload (its overload name dropped)."""
    packet = getattr(func, "overloadpacket", func)
    ns = getattr(packet, "__module__", "").rsplit(".", 1)[-1] or "aten"
    return f"torch.ops.{ns}.{getattr(packet, '__name__', str(func)).split('.')[-1]}"


def DispatchRecorder(recorder, torch):
    """A TorchDispatchMode instance recording through `recorder` (an mxgate Recorder)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    bindings = {"torch.ops.aten._scaled_mm": ScaledMmBinding("torch.ops.aten._scaled_mm")}
    for path, decl in recorder.hooks.items():
        if path.startswith("torch.ops.") and decl is not None:
            family, name, c = declaration_of(None, decl)
            bindings[path] = OpBinding(lambda *a: None, family, name, c)

    class _Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = op_name(func)
            binding = bindings.get(name)
            if binding is None or not recorder._wanted(name):
                return func(*args, **kwargs)
            return recorder.call(func, binding, name, args, kwargs, depth=3)

    return _Mode()
