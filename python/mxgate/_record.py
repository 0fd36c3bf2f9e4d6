"""The flight recorder: capture (docs/record.md). `mxgate.record(DIR, ...)` wraps callables in
place, records each call it is allowed to (limits, sampling) as a folder of DIR, and restores
them on exit; `MXGATE_RECORD=DIR` does the same from `import mxgate` until the process exits.

One call's folder, NNNNNN_OP_pPID[_rRANK]:
  manifest.json   written BEFORE the call with every input (and the out= buffer as it was),
                  rewritten after it with the outputs; schema mxgate-record/1
  *.bin           one raw-bytes file per tensor (its whole strided window, mxgate._record_tensors)
  complete        written last: the sha256 of the final manifest. A folder without it is a call
                  that crashed (or raised: the manifest then says what)
DIR/summary.json: what was seen, recorded and skipped (by reason), per op and in all.
"""

import atexit
import fnmatch
import functools
import hashlib
import importlib
import json
import os
import platform
import sys
import threading
import time

from ._record_bind import (Bound, OpBinding, ScaledMmBinding, contract_fields, declaration_of,
                           result_bits)
from ._record_tensors import is_tensor, write
from .errors import InputError

from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]
Patterns = Union[str, Iterable[str], None]
Hooks = Union[Dict[str, Any], Sequence[str], None]
SCHEMA = "mxgate-record/1"
_NUMPY_ADAPTER_MODULES = ("mxgate.adapters.numpy", "mxgate.adapters.numpy_faulty")
DEFAULT_MAX_CALLS = 1000
DEFAULT_MAX_BYTES = 4 << 30
_local = threading.local()  # .depth: a recorded call inside a recorded call is not recorded


def resolve(path):
    """(owner, attribute, object) of a dotted path: "pkg.mod.func", "pkg.mod:Class.method" or
    "pkg.mod.Class.method" (the longest importable module prefix, then attributes)."""
    if ":" in path:
        module, _, rest = path.partition(":")
        parts = rest.split(".")
        owner = importlib.import_module(module)
    else:
        parts = path.split(".")
        owner = None
        for i in range(len(parts) - 1, 0, -1):
            try:
                owner = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            parts = parts[i:]
            break
        if owner is None:
            raise InputError(f"hook {path}: no importable module in it")
    for p in parts[:-1]:
        owner = getattr(owner, p)
    if not hasattr(owner, parts[-1]):
        raise InputError(f"hook {path}: {owner!r} has no attribute {parts[-1]!r}")
    return owner, parts[-1], getattr(owner, parts[-1])


def known_hooks():
    """{path: None} for every op the shipped numpy adapters declare with @mxgate.op (their
    own declarations apply)."""
    out = {}
    for name in _NUMPY_ADAPTER_MODULES:
        mod = importlib.import_module(name)
        for cls_name, cls in sorted(vars(mod).items()):
            if not isinstance(cls, type) or cls.__module__ != name:
                continue
            for attr, fn in sorted(vars(cls).items()):
                if callable(fn) and getattr(fn, "_mxgate_op", None) is not None:
                    out[f"{name}:{cls_name}.{attr}"] = None
    return out


def _versions():
    v = {"python": platform.python_version()}
    try:
        from . import __version__

        v["mxgate"] = __version__
    except ImportError:
        v["mxgate"] = "?"
    import numpy

    v["numpy"] = numpy.__version__
    torch = sys.modules.get("torch")
    if torch is not None:
        v["torch"] = getattr(torch, "__version__", "?")
        v["cuda"] = getattr(getattr(torch, "version", None), "cuda", None)
        v["hip"] = getattr(getattr(torch, "version", None), "hip", None)
    return v


def _device_info():
    info = {"host": platform.node(), "machine": platform.machine()}
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            i = torch.cuda.current_device()
            info["gpu"] = torch.cuda.get_device_name(i)
            info["capability"] = ".".join(map(str, torch.cuda.get_device_capability(i)))
            info["gpu_count"] = torch.cuda.device_count()
            drv = getattr(torch._C, "_cuda_getDriverVersion", None)
            info["driver"] = drv() if drv else None
            info["cublas"] = None  # torch exposes no cuBLAS version; the CUDA version is there
    except Exception as e:  # an unhealthy CUDA context must not stop the recording
        info["gpu_error"] = f"{type(e).__name__}: {e}"
    return info


def _rank():
    r = {k: os.environ[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE") if k in os.environ}
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.distributed.is_available() and \
                torch.distributed.is_initialized():
            r["torch_distributed_rank"] = torch.distributed.get_rank()
    except Exception:
        pass
    return r


def _site(depth):
    """file:line of the caller `depth` frames up, and the three frames above it."""
    try:
        f = sys._getframe(depth)
    except ValueError:
        return "?", []
    here, stack = f"{f.f_code.co_filename}:{f.f_lineno}", []
    g = f.f_back
    while g is not None and len(stack) < 3:
        stack.append(f"{g.f_code.co_filename}:{g.f_lineno} in {g.f_code.co_name}")
        g = g.f_back
    return f"{here} in {f.f_code.co_name}", stack


def _nbytes(x):
    if is_tensor(x):
        if hasattr(x, "element_size"):
            return int(x.numel()) * int(x.element_size())
        return int(x.nbytes)
    return 0


def _write_json(path, obj):
    tmp = path + ".tmp"
    text = json.dumps(obj, sort_keys=True)  # no indent: json's C encoder (5x the indented speed)
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class Recorder:
    """What mxgate.record returns: a context manager (also start() / stop())."""

    def __init__(self, directory: PathLike, include: Patterns = None, exclude: Patterns = None,
                 max_calls: Optional[int] = DEFAULT_MAX_CALLS,
                 max_bytes: Optional[int] = DEFAULT_MAX_BYTES,
                 max_calls_per_op: Optional[int] = None, max_bytes_per_op: Optional[int] = None,
                 sample: float = 1.0, hooks: Hooks = None, known: bool = True,
                 torch: Union[bool, str] = "auto", dispatch: bool = False) -> None:
        if not (0 < float(sample) <= 1):
            raise InputError(f"sample must be in (0, 1], not {sample}")
        self.directory = os.fspath(directory)
        self.include = [include] if isinstance(include, str) else list(include or [])
        self.exclude = [exclude] if isinstance(exclude, str) else list(exclude or [])
        self.limits = dict(max_calls=max_calls, max_bytes=max_bytes,
                           max_calls_per_op=max_calls_per_op, max_bytes_per_op=max_bytes_per_op,
                           sample=float(sample))
        self.hooks = dict(known_hooks()) if known else {}
        if isinstance(hooks, (list, tuple)):
            hooks = {h: None for h in hooks}
        self.hooks.update(hooks or {})
        self.torch, self.dispatch = torch, dispatch
        self._lock = threading.Lock()
        self._installed = []  # (owner, attribute, the raw original)
        self._mode = None
        self._seq = 0
        self.stats = {}  # op -> counters
        self.totals = dict(seen=0, recorded=0, bytes=0, tensor_bytes=0)
        self.not_installed = {}  # hook -> why
        self._env = None

    # ---- install / restore ------------------------------------------------------------------

    def _wanted(self, name):
        if self.include and not any(fnmatch.fnmatchcase(name, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatchcase(name, p) for p in self.exclude)

    def start(self) -> "Recorder":
        os.makedirs(self.directory, exist_ok=True)
        self._env = dict(versions=_versions(), device=_device_info(), rank=_rank(),
                         pid=os.getpid(), argv=list(sys.argv))
        for path, decl in self.hooks.items():
            if not self._wanted(path):
                self.not_installed[path] = "excluded by include / exclude"
                continue
            try:
                owner, attr, target = resolve(path)
                raw = (vars(owner).get(attr, target) if isinstance(owner, type) else target)
                fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
                family, name, c = declaration_of(fn, decl)
                binding = OpBinding(fn, family, name, c, method=isinstance(owner, type) and
                                    not isinstance(raw, staticmethod))
            except Exception as e:  # a hook that cannot be installed is reported, never fatal
                self.not_installed[path] = f"{type(e).__name__}: {e}"
                continue
            self._install(owner, attr, raw, fn, binding, path)
        self._install_torch()
        return self

    def _install(self, owner, attr, raw, fn, binding, path):
        wrapper = self._wrap(fn, binding, path)
        if isinstance(raw, staticmethod):
            wrapper = staticmethod(wrapper)
        setattr(owner, attr, wrapper)
        self._installed.append((owner, attr, raw))

    def _install_torch(self):
        torch = sys.modules.get("torch") if self.torch == "auto" else (
            importlib.import_module("torch") if self.torch else None)
        if torch is None:
            return
        name = "torch._scaled_mm"
        if not self._wanted(name):
            self.not_installed[name] = "excluded by include / exclude"
            return
        if self.dispatch:
            from ._record_torch import DispatchRecorder

            self._mode = DispatchRecorder(self, torch)
            self._mode.__enter__()
            return
        original = getattr(torch, "_scaled_mm", None)
        if original is None:
            self.not_installed[name] = f"torch {torch.__version__} has no _scaled_mm"
            return
        self._install(torch, "_scaled_mm", original, original, ScaledMmBinding(), name)

    def stop(self) -> None:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        while self._installed:
            owner, attr, raw = self._installed.pop()
            setattr(owner, attr, raw)
        self.write_summary()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- one call ---------------------------------------------------------------------------

    def _wrap(self, fn, binding, path):
        recorder = self

        @functools.wraps(fn)
        def hooked(*args, **kwargs):
            if getattr(_local, "depth", 0):
                return fn(*args, **kwargs)
            return recorder.call(fn, binding, path, args, kwargs, depth=3)

        return hooked

    def _limit_reason(self, s, nbytes):
        """The limit (sampling, counts, bytes; in all and per op) this call of an op whose
        stats are `s` would break, else None."""
        lim = self.limits
        i = s["seen"] - 1
        rate = lim["sample"]
        if rate < 1 and int((i + 1) * rate) == int(i * rate):
            return "sampled_out"
        if lim["max_calls"] is not None and self.totals["recorded"] >= lim["max_calls"]:
            return "max_calls"
        if lim["max_calls_per_op"] is not None and s["recorded"] >= lim["max_calls_per_op"]:
            return "max_calls_per_op"
        if lim["max_bytes"] is not None and self.totals["bytes"] + nbytes > lim["max_bytes"]:
            return "max_bytes"
        if lim["max_bytes_per_op"] is not None and s["bytes"] + nbytes > lim["max_bytes_per_op"]:
            return "max_bytes_per_op"
        return None

    def _admit(self, op, nbytes):
        """None to record this call, else the reason it is skipped (counted)."""
        s = self.stats.setdefault(op, dict(seen=0, recorded=0, bytes=0, tensor_bytes=0,
                                           skipped={}))
        s["seen"] += 1
        self.totals["seen"] += 1
        # No limit matters while nothing may be copied out (a graph capture, a compile trace).
        why = torch_state_refusing_copies() or self._limit_reason(s, nbytes)
        if why:
            s["skipped"][why] = s["skipped"].get(why, 0) + 1
            return None, why
        s["recorded"] += 1
        self.totals["recorded"] += 1
        s["bytes"] += nbytes
        self.totals["bytes"] += nbytes
        self._seq += 1
        return self._seq, None

    def call(self, fn: Callable[..., Any], binding: Any, path: str, args: Sequence[Any],
             kwargs: Dict[str, Any], depth: int = 2, bound: Optional[Bound] = None) -> Any:
        """Runs fn(*args, **kwargs), recording it when admitted; returns its result."""
        _local.depth = getattr(_local, "depth", 0) + 1
        try:
            try:
                b = bound or binding.bind(args, kwargs)
            except Exception as e:  # a call the binding cannot read runs unrecorded, counted
                with self._lock:
                    s = self.stats.setdefault(path, dict(seen=0, recorded=0, bytes=0,
                                                         tensor_bytes=0, skipped={}))
                    s["seen"] += 1
                    s["skipped"]["unbindable"] = s["skipped"].get("unbindable", 0) + 1
                    s.setdefault("unbindable", f"{type(e).__name__}: {e}")
                return fn(*args, **kwargs)
            estimate = sum(_nbytes(v) for v in b.tensors.values())
            estimate += 2 * _nbytes(b.tensors.get("out")) + b.m * b.n * 4
            with self._lock:
                seq, _ = self._admit(b.op, estimate)
            if seq is None:
                return fn(*args, **kwargs)
            return self._record(seq, fn, binding, path, b, args, kwargs, depth)
        finally:
            _local.depth -= 1

    def _record(self, seq, fn, binding, path, b: Bound, args, kwargs, depth):
        rank = os.environ.get("RANK")
        folder = os.path.join(self.directory, f"{seq:06d}_{b.op}_p{os.getpid()}" +
                              (f"_r{rank}" if rank is not None else ""))
        os.makedirs(folder, exist_ok=True)
        site, stack = _site(depth + 1)
        self_class = None
        if getattr(binding, "method", False) and args:
            cls = type(args[0])
            self_class = f"{cls.__module__}:{cls.__qualname__}"
        m = dict(schema=SCHEMA, sequence=seq, hook=path, binding=binding.kind,
                 self_class=self_class,
                 op=dict(family=b.family, name=b.op, contract=contract_fields(b.contract)),
                 m=b.m, n=b.n, k=b.k, roles=b.roles, out_arg=b.out_arg, out_dtype=b.out_dtype,
                 kwargs=b.kwargs, notes=b.notes, unsupported=b.unsupported,
                 site=site, stack=stack, time=time.time(), **self._env,
                 limits=self.limits, completed=False, tensors={})
        written = 0
        for name, value in b.tensors.items():
            key = "out.before" if name == b.out_arg else name
            d = write(folder, key, value, b.dtypes.get(name))
            written += d["window_bytes"]
            m["tensors"][key] = d
        manifest = os.path.join(folder, "manifest.json")
        _write_json(manifest, m)
        t0 = time.perf_counter()
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:
            m["error"] = f"{type(e).__name__}: {e}"
            m["seconds"] = time.perf_counter() - t0
            _write_json(manifest, m)
            raise
        m["seconds"] = time.perf_counter() - t0
        outs = binding.outputs(result) if result is not None else {}
        for role, value in outs.items():
            if is_tensor(value):
                key = "result" if role == "out" else f"result.{role}"
                d = write(folder, key, _bits(value), b.out_dtype if role == "out" else None)
                written += d["window_bytes"]
                m["tensors"][key] = d
        if b.out_arg:
            d = write(folder, "out.after", _bits(b.tensors[b.out_arg]), b.dtypes.get(b.out_arg))
            written += d["window_bytes"]
            m["tensors"]["out.after"] = d
        judged = "out.after" if b.out_arg and "result" not in m["tensors"] else "result"
        if b.out_arg and "result" in m["tensors"]:
            m["notes"].append("the call returned a result and had out=: the result is judged, "
                              "out.after recorded beside it")
        if judged in m["tensors"]:
            m["roles"]["out"] = {"tensor": judged}
        for role in ("out_scale",):
            if f"result.{role}" in m["tensors"]:
                m["roles"][role] = {"tensor": f"result.{role}"}
        m["completed"] = True
        _write_json(manifest, m)
        with open(os.path.join(folder, "complete"), "w") as f:
            f.write(hashlib.sha256(open(manifest, "rb").read()).hexdigest() + "\n")
        with self._lock:
            tensor_bytes = sum(_nbytes(v) for v in b.tensors.values())
            s = self.stats[b.op]
            s["tensor_bytes"] += tensor_bytes
            self.totals["tensor_bytes"] += tensor_bytes
            s.setdefault("written", 0)
            s["written"] += written
        return result

    def write_summary(self) -> None:
        _write_json(os.path.join(self.directory, "summary.json"), dict(
            schema="mxgate-record-summary/1", limits=self.limits, totals=self.totals,
            ops=self.stats, hooks_installed=sorted({p for p in self.hooks} -
                                                   set(self.not_installed)),
            hooks_not_installed=self.not_installed,
            not_captured=("calls of callables no hook names; calls made while another recorded "
                          "call runs (the outermost is recorded); under CUDA graphs only "
                          "eager calls (warm-up before capture): calls during a capture are "
                          "skipped as cuda_graph_capture, and a graph replay runs no Python; "
                          "under torch.compile only ops the compiled code calls through the "
                          "dispatcher, and only with dispatch=True (calls while it traces are "
                          "skipped as torch_compile_tracing); calls of excluded hooks (not "
                          "installed, so not counted)")))


def torch_state_refusing_copies() -> Optional[str]:
    """Why no tensor may be copied out now, or None: a CUDA stream capturing a graph (a copy to
    the host is an illegal synchronisation there, so recording would break the user's capture)
    or torch.compile tracing (the tensors are fake and hold no bytes). Such a call runs
    unrecorded and is counted as skipped with this reason."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
            return "cuda_graph_capture"
    except Exception:  # a torch without CUDA: no graph can capture
        pass
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and getattr(compiler, "is_compiling", lambda: False)():
        return "torch_compile_tracing"
    return None


def _bits(value):
    return result_bits(value)


def record(directory: PathLike, include: Patterns = None, exclude: Patterns = None,
           max_calls: Optional[int] = DEFAULT_MAX_CALLS,
           max_bytes: Optional[int] = DEFAULT_MAX_BYTES, sample: float = 1.0,
           hooks: Hooks = None, max_calls_per_op: Optional[int] = None,
           max_bytes_per_op: Optional[int] = None, known: bool = True,
           torch: Union[bool, str] = "auto", dispatch: bool = False) -> Recorder:
    """The flight recorder over `with`: every call of a hooked callable recorded under
    `directory` (docs/record.md). hooks: {dotted path: declaration or None} (None: the
    callable's own @mxgate.op declaration) or a list of paths; known: also the shipped numpy
    adapters' ops and torch._scaled_mm (when torch is imported; torch=True imports it);
    dispatch: torch ops through a TorchDispatchMode instead of patching torch._scaled_mm.
    include / exclude: fnmatch patterns on hook paths. Limits: max_calls / max_bytes in all,
    max_calls_per_op / max_bytes_per_op per op (None: no limit), sample: the fraction of
    each op's calls kept (evenly spaced, deterministic)."""
    return Recorder(directory, include, exclude, max_calls, max_bytes, max_calls_per_op,
                    max_bytes_per_op, sample, hooks, known, torch, dispatch)


def _env_int(name, default):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise InputError(f"{name}={v!r} is not an integer") from None


def start_from_environment():
    """MXGATE_RECORD=DIR: a Recorder started now and stopped at exit (MXGATE_RECORD_INCLUDE /
    _EXCLUDE: comma-separated patterns; _MAX_CALLS, _MAX_BYTES, _SAMPLE; _HOOKS: more dotted
    paths, each carrying its own @mxgate.op declaration; _TORCH=1 imports torch to hook it)."""
    directory = os.environ["MXGATE_RECORD"]

    def patterns(name):
        v = os.environ.get(name, "")
        return [p for p in v.split(",") if p]

    hooks = patterns("MXGATE_RECORD_HOOKS")
    r = Recorder(directory, patterns("MXGATE_RECORD_INCLUDE"), patterns("MXGATE_RECORD_EXCLUDE"),
                 _env_int("MXGATE_RECORD_MAX_CALLS", DEFAULT_MAX_CALLS),
                 _env_int("MXGATE_RECORD_MAX_BYTES", DEFAULT_MAX_BYTES),
                 sample=float(os.environ.get("MXGATE_RECORD_SAMPLE", "1") or 1),
                 hooks=hooks, torch=True if os.environ.get("MXGATE_RECORD_TORCH") == "1"
                 else "auto")
    r.start()
    atexit.register(r.stop)
    return r
