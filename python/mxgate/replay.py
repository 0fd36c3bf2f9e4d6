"""mxgate.replay: every recorded call judged against the bit-exact reference with its op's
declared convention and accumulator (docs/record.md §4). A GEMM goes through check_gemm (the
library's check-gemm): bound mode with the declared accumulator model, exact mode when the op
declares none; the verdict names the first and worst elements. A form the reference cannot
take here is "unsupported" with the reason, counted, never a pass. A bad dump (truncated file,
unknown dtype, missing tensor, bytes not matching the manifest's sha256, a missing completion
marker) is a problem naming the file: the report's exit code is 2 (the rest is still judged;
a crashed call's inputs are judged when its output exists).
"""

import json
import os
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

import numpy as np

from ._record_load import load_record, record_folders
from ._record_tensors import BadDump
from .errors import InputError

PathLike = Union[str, "os.PathLike[str]"]
_FP8 = ("e4m3fn", "e5m2")


class _Unsupported(Exception):
    pass


def gemm_call(rec):
    """(check_gemm's keyword arguments, mode, accumulator) of a recorded GEMM."""
    c, fam, o, dt = rec.contract, rec.family, rec.operands, rec.dtypes
    if "out" not in o:
        raise _Unsupported("no output recorded")
    out = o["out"]
    if dt["out"] not in ("f32", "bf16"):
        raise _Unsupported(f"output dtype {dt['out']}: check-gemm judges f32 and bf16 outputs")
    kw = dict(c=out.astype(np.float32 if dt["out"] == "f32" else np.uint16, copy=False))
    if fam == "gemm_block":
        if dt["a"] not in _FP8 or dt["b"] not in _FP8 or dt["a"] != dt["b"]:
            raise _Unsupported(f"operands {dt['a']} x {dt['b']}: the block scheme takes one "
                               f"FP8 format for both")
        kw.update(a=o["a"], a_scales=o["a_scale"].astype(np.float32), b=o["b"],
                  b_scales=o["b_scale"].astype(np.float32), scheme="block", fmt=dt["a"])
        if (tuple(c.a_block), tuple(c.b_block)) != ((1, 128), (128, 128)):
            kw.update(a_block=tuple(c.a_block), b_block=tuple(c.b_block))
    elif fam == "gemm_mx":
        for r in ("a_scale", "b_scale"):
            if o[r].ndim != 2:
                raise _Unsupported(f"{r} in a padded layout ({', '.join(c.a_scale_layouts)}): "
                                   f"replay reads logical (rows, K/32) scales")
        packed = "e2m1" in (dt["a"], dt["b"])
        kw.update(a=o["a"], a_scales=o["a_scale"], b=o["b"], b_scales=o["b_scale"],
                  scheme="mx", a_format=dt["a"], b_format=dt["b"],
                  convention=c.convention or "ocp_mx", k=rec.manifest["k"] if packed else None)
    elif fam == "gemm_nvfp4":
        kw.update(a=o["a"], a_scales=o["a_scale"], b=o["b"], b_scales=o["b_scale"],
                  scheme="nvfp4", k=rec.manifest["k"], a_global=o["a_global"].reshape(1),
                  b_global=o["b_global"].reshape(1))
    elif fam == "gemm_bf16":
        kw.update(a=o["a"], a_scales=None, b=o["b"], b_scales=None, scheme="bf16")
    else:
        raise _Unsupported(f"family {fam}")
    if c.accumulator:
        kw.update(mode="bound", accumulator=c.accumulator)
        return kw, "bound", c.accumulator
    return kw, "exact", None


def _judge_elementwise(rec, out):
    """upcast_e8m0 and MX dequantize against the reference decode / dequantize of the declared
    convention: bit for bit (any NaN equals any NaN), the first differing element located."""
    from .reference import decode, dequantize

    c, o, dt = rec.contract, rec.operands, rec.dtypes
    if not c.convention:
        raise _Unsupported(f"{rec.family} declares no convention to judge it by")
    if "out" not in o:
        raise _Unsupported("no output recorded")
    if rec.family == "upcast_e8m0":
        want = decode(o["a"], "e8m0", c.convention).astype(np.float32)
    else:
        if tuple(c.a_block) != (1, 32) or o["a_scale"].dtype != np.uint8:
            raise _Unsupported(f"dequantize with {tuple(c.a_block)} blocks: replay judges MX "
                               f"(1x32 e8m0)")
        fmt = dt["a"]
        want = dequantize(o["a"], o["a_scale"], fmt, c.convention,
                          dtype="bf16" if dt["out"] == "bf16" else "float32",
                          k=rec.manifest["k"] if fmt == "e2m1" else None)
    got = o["out"].reshape(want.shape) if o["out"].size == want.size else o["out"]
    if got.shape != want.shape:
        out.update(verdict="fail", mode="exact", accumulator=None, mismatches=int(want.size),
                   first=None, worst=None, text=f"output shape {got.shape}, expected "
                                                f"{want.shape}", heatmap=None,
                   reason=f"output shape {got.shape}, expected {want.shape}")
        return out
    w = np.ascontiguousarray(want)
    g = np.ascontiguousarray(got).astype(w.dtype, copy=False)
    bits = w.view(np.uint32 if w.dtype == np.float32 else np.uint16)
    gbits = g.view(bits.dtype)
    nan = (np.isnan(w) & np.isnan(g)) if w.dtype == np.float32 else np.zeros(w.shape, bool)
    bad = (bits != gbits) & ~nan
    first = None
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))  # the row-major first
        r, col = divmod(i, w.shape[1]) if w.ndim > 1 else (0, i)
        first = dict(row=r, col=col, expected_bits=int(bits.reshape(-1)[i]),
                     actual_bits=int(gbits.reshape(-1)[i]), expected=float(w.reshape(-1)[i]),
                     actual=float(g.reshape(-1)[i]), ulp=None)
    n = int(bad.sum())
    out.update(verdict="fail" if n else "pass", mode="exact", accumulator=None, mismatches=n,
               first=first, worst=None, heatmap=None,
               text=f"{rec.family} ({c.convention}): {n} of {w.size} elements differ")
    return out


def _element(e):
    if e is None:
        return None
    return dict(row=e.row, col=e.col, expected_bits=e.expected_bits, actual_bits=e.actual_bits,
                ulp=e.ulp, expected=float(e.expected), actual=float(e.actual))


def judge(rec, heatmap=None):
    """One record's verdict as a dict: verdict pass / fail / unsupported / crashed."""
    from .reference import check_gemm

    m = rec.manifest
    out = dict(record=rec.folder, hook=m.get("hook"), op=m["op"]["name"], family=rec.family,
               m=m["m"], n=m["n"], k=m["k"], site=m.get("site"), problems=list(rec.problems))
    if rec.crashed and "out" not in rec.operands:
        out.update(verdict="crashed", reason=rec.crashed)
        return out
    if m.get("unsupported"):
        out.update(verdict="unsupported", reason=m["unsupported"])
        return out
    other = [p for p in rec.problems if p != rec.crashed]
    if other:
        out.update(verdict="bad", reason="; ".join(other))
        return out
    try:
        if rec.family in ("upcast_e8m0", "dequantize"):
            return _judge_elementwise(rec, out)
        if not rec.family.startswith("gemm"):
            raise _Unsupported(f"family {rec.family}: replay judges the GEMM families, "
                               f"upcast_e8m0 and dequantize")
        kw, mode, acc = gemm_call(rec)
    except _Unsupported as e:
        out.update(verdict="unsupported", reason=str(e))
        return out
    try:
        v = check_gemm(**kw, heatmap=heatmap)
    except InputError as e:  # what the recorded arrays cannot be: a bad dump, named
        out.update(verdict="bad", reason=f"{rec.folder}: check-gemm refused it: {e}")
        out["problems"].append(out["reason"])
        return out
    out.update(verdict="pass" if v.passed else "fail", mode=mode, accumulator=acc,
               mismatches=v.mismatches, first=_element(v.first), worst=_element(v.worst),
               text=str(v), heatmap=v.heatmap if not v.passed else None)
    if rec.crashed:
        out["crashed"] = rec.crashed
    return out


@dataclass
class ReplayReport:
    """What mxgate.replay found: one verdict dict per record (in sequence order), problems (the
    bad-dump messages, each naming its file), a summary per (op, M, N, K), calls/s."""

    directory: str
    results: List[Dict[str, Any]]
    problems: List[str]
    seconds: float
    summary: List[Dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> List[Dict[str, Any]]:
        return [r for r in self.results if r["verdict"] == "fail"]

    @property
    def passed(self) -> bool:
        return not self.problems and not self.failed and not any(
            r["verdict"] in ("crashed", "bad") for r in self.results)

    @property
    def exit_code(self) -> int:
        """2 a bad dump, 1 a call failed, 0 otherwise (unsupported calls counted, not failed)."""
        return 2 if self.problems else 1 if self.failed else 0

    def to_json(self) -> Dict[str, Any]:
        return dict(schema="mxgate-replay/1", directory=self.directory, passed=self.passed,
                    exit_code=self.exit_code, seconds=self.seconds,
                    calls_per_second=len(self.results) / self.seconds if self.seconds else None,
                    summary=self.summary, problems=self.problems, results=self.results)

    def junit(self, path: PathLike) -> None:
        """A JUnit XML file: one testsuite per op, one testcase per record."""
        root = ET.Element("testsuites", name="mxgate replay")
        for op in sorted({r["op"] for r in self.results}):
            rs = [r for r in self.results if r["op"] == op]
            suite = ET.SubElement(root, "testsuite", name=op, tests=str(len(rs)),
                                  failures=str(sum(r["verdict"] == "fail" for r in rs)),
                                  errors=str(sum(r["verdict"] in ("bad", "crashed") for r in rs)),
                                  skipped=str(sum(r["verdict"] == "unsupported" for r in rs)))
            for r in rs:
                case = ET.SubElement(suite, "testcase", classname=op,
                                     name=f"{os.path.basename(r['record'])} M={r['m']} "
                                          f"N={r['n']} K={r['k']}")
                if r["verdict"] == "fail":
                    ET.SubElement(case, "failure", message=_first_line(r)).text = r["text"]
                elif r["verdict"] in ("bad", "crashed"):
                    ET.SubElement(case, "error", message=r["reason"])
                elif r["verdict"] == "unsupported":
                    ET.SubElement(case, "skipped", message=r["reason"])
        ET.ElementTree(root).write(os.fspath(path), encoding="utf-8", xml_declaration=True)

    def text(self) -> str:
        lines = []
        for r in self.results:
            head = (f"{os.path.basename(r['record'])}: {r['op']} M={r['m']} N={r['n']} "
                    f"K={r['k']}: {r['verdict'].upper()}")
            if r["verdict"] in ("pass", "fail"):
                head += f" ({r['mode']}" + (f", {r['accumulator']}" if r["accumulator"] else "")
                head += ")"
            lines.append(head)
            if r["verdict"] == "fail" and r.get("first") is not None:
                lines.append(f"    {_first_line(r)}   (called at {r['site']})")
            if r.get("reason") and (r["verdict"] != "fail" or "rerun" in r):
                lines.append(f"    {r['reason']}")
            if r.get("rerun", {}).get("ran") is False:
                lines.append(f"    not re-run: {r['rerun']['why']}")
        lines.append("summary (op, M, N, K: calls pass fail unsupported crashed/bad):")
        for s in self.summary:
            lines.append(f"  {s['op']} {s['m']}x{s['n']}x{s['k']}: {s['calls']} {s['pass']} "
                         f"{s['fail']} {s['unsupported']} {s['crashed'] + s['bad']}")
        for p in self.problems:
            lines.append(f"bad dump: {p}")
        n = len(self.results)
        lines.append(f"{n} calls replayed in {self.seconds:.3f} s, "
                     f"{len(self.failed)} failed; exit {self.exit_code}")
        return "\n".join(lines) + "\n"


def _first_line(r):
    f = r.get("first")
    if not f:
        return r.get("reason", "")
    return (f"{r['mismatches']} element(s) off; first ({f['row']},{f['col']}) expected "
            f"{f['expected']:.9g} actual {f['actual']:.9g}")


def _summarize(results):
    groups = {}
    for r in results:
        key = (r["op"], r["m"], r["n"], r["k"])
        g = groups.setdefault(key, dict(op=r["op"], m=r["m"], n=r["n"], k=r["k"], calls=0,
                                        **{v: 0 for v in ("pass", "fail", "unsupported",
                                                          "crashed", "bad")}))
        g["calls"] += 1
        g[r["verdict"]] += 1
    return [groups[k] for k in sorted(groups)]


def _rerun(rec, r):
    """Re-runs the recorded callable on the recorded inputs (same library, same GPU: the same
    bits expected) and notes on r whether its output equals the recorded one, bit for bit."""
    from .shrink import _callable, rerun

    found = _callable(rec)
    if found is None:
        r["rerun"] = dict(ran=False, why=f"{rec.manifest.get('hook')} is not importable here")
        return
    ops = {k: v for k, v in rec.operands.items() if k != "out"}
    m = rec.manifest
    try:
        got = rerun(rec, found, ops, (m["m"], m["n"], m["k"]))
    except Exception as e:  # the callable failing now is reported, not raised
        r["rerun"] = dict(ran=False, why=f"{type(e).__name__}: {e}")
        return
    want = rec.operands["out"]
    same = got.shape == want.shape and np.array_equal(
        np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
    differing = 0 if same else int(np.count_nonzero(got != want)) if got.shape == want.shape \
        else -1
    r["rerun"] = dict(ran=True, same_bits=same, differing=differing)
    if not same:
        r["verdict"] = "fail"
        r["reason"] = (f"the recorded callable re-run on the recorded inputs gave other bits "
                       f"({differing} elements differ): not deterministic (a racing kernel, "
                       f"or one reading memory outside its tensors)")


def replay(directory: PathLike, heatmap_dir: Optional[PathLike] = None,
           rerun: bool = False) -> ReplayReport:
    """Judges every record under `directory` (or the one record folder it names); returns a
    ReplayReport (exit_code 2 for bad dumps, 1 for failing calls). heatmap_dir: an SVG of each
    failing GEMM's mismatches there. rerun: also re-run each judged call's recorded callable
    (when importable here) on its recorded inputs; other bits than recorded are a failure (a
    non-deterministic kernel, or another library or GPU than the recording's)."""
    directory = os.fspath(directory)
    t0 = time.perf_counter()
    results, problems = [], []
    for folder in record_folders(directory):
        try:
            rec = load_record(folder)
        except BadDump as e:
            problems.append(str(e))
            results.append(dict(record=folder, hook=None, op="?", family="?", m=0, n=0, k=0,
                                verdict="bad", reason=str(e), problems=[str(e)]))
            continue
        heat = None
        if heatmap_dir is not None:
            os.makedirs(heatmap_dir, exist_ok=True)
            heat = os.path.join(os.fspath(heatmap_dir), os.path.basename(folder) + ".svg")
        r = judge(rec, heat)
        if rerun and r["verdict"] in ("pass", "fail"):
            _rerun(rec, r)
        if r["verdict"] == "pass" and heat and os.path.exists(heat):
            os.remove(heat)
        problems += [p for p in r["problems"] if p not in problems]
        results.append(r)
    report = ReplayReport(directory, results, problems, time.perf_counter() - t0)
    report.summary = _summarize(results)
    return report


def main_replay(argv) -> int:
    """`mxgate replay DIR [--json FILE] [--junit FILE] [--heatmap-dir DIR]` (the CLI verb)."""
    args, opts = _parse(argv, ("json", "junit", "heatmap-dir", "rerun"), "replay DIR")
    report = replay(args[0], heatmap_dir=opts.get("heatmap-dir"),
                    rerun=opts.get("rerun") is not None)
    print(report.text(), end="")
    if "json" in opts:
        with open(opts["json"], "w") as f:
            json.dump(report.to_json(), f, indent=1)
    if "junit" in opts:
        report.junit(opts["junit"])
    return report.exit_code


def _parse(argv, options, usage):
    args, opts, i = [], {}, 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            if eq:  # --name=VALUE, as the C++ verbs take it
                if name not in options:
                    raise InputError(f"unknown option --{name} (usage: mxgate {usage} "
                                     + " ".join(f"[--{o} ...]" for o in options) + ")")
                if name == "rerun":
                    raise InputError("--rerun takes no value")
                opts[name] = value
                i += 1
                continue
            if name in ("rerun",) and name in options:
                opts[name] = ""
                i += 1
                continue
            if name not in options:
                raise InputError(f"unknown option {a} (usage: mxgate {usage} "
                                 + " ".join(f"[--{o} ...]" for o in options) + ")")
            if i + 1 >= len(argv):
                raise InputError(f"{a} needs a value")
            opts[name] = argv[i + 1]
            i += 2
            continue
        args.append(a)
        i += 1
    if len(args) != 1:
        raise InputError(f"usage: mxgate {usage}: name one directory")
    return args, opts
