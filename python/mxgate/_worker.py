"""The worker process behind `--impl py:MODULE:OBJECT` (impl/python_worker.cpp; docs/python.md
§10).

    python -m mxgate._worker MODULE:OBJECT

OBJECT is an mxgate.Adapter instance or subclass (instantiated without arguments). The protocol
runs over the process's stdin / stdout, which are moved aside first so that anything the
adapter prints goes to stderr (mxgate keeps its tail for error messages). Every message is
<u32 header length><header text><u64 body length><body bytes>, little endian.

    worker -> mxgate   "hello 1" + the description (mxgate.adapter.describe)
                       | "unavailable" + reason | "error" + message
    mxgate -> worker   "call OP M N K" + one line per tensor
                       ("in|out ROLE DTYPE ROWS COLS LD LAYOUT BYTES") + the input bytes
    worker -> mxgate   "done" + the output bytes | "unsupported" + reason | "error" + message
    mxgate -> worker   "survey OP TARGET all|sample": the cast survey of op OP in this process
                       (mxgate.survey: inputs made here, compared by this process's
                       libmxgate.so, on the device for a device op)
    worker -> mxgate   "progress DONE TOTAL" (at most twice a second), then "done" + the
                       survey's text lines | "unsupported" + reason (mxgate then calls the op)
                       | "error" + message

The worker exits when mxgate closes the connection.
"""

import os
import struct
import sys

import numpy as np


def _read_exact(f, n):
    chunks = []
    while n > 0:
        b = f.read(n)
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def _read(f):
    head = _read_exact(f, 4)
    if head is None:
        return None
    (hlen,) = struct.unpack("<I", head)
    header = _read_exact(f, hlen)
    (blen,) = struct.unpack("<Q", _read_exact(f, 8))
    body = _read_exact(f, blen) if blen else b""
    return header.decode(), body


def _write(f, header, body=b""):
    if isinstance(body, str):
        body = body.encode("utf-8", "replace")
    h = header.encode()
    f.write(struct.pack("<I", len(h)) + h + struct.pack("<Q", len(body)))
    if body:
        f.write(body)
    f.flush()


def load(target):
    """The adapter MODULE:OBJECT names (an instance; a class is instantiated): mxgate.spec.load,
    the loader mxgate.check and the pytest plugin use too."""
    from .spec import load as load_spec

    return load_spec(target)


def serve(adapter, proto_in, proto_out):
    from .adapter import Tensor, describe

    _write(proto_out, "hello 1", describe(adapter))
    ops = adapter.ops
    while True:
        msg = _read(proto_in)
        if msg is None:
            return
        header, body = msg
        lines = header.splitlines()
        if lines[0].startswith("survey "):
            _survey(ops, lines[0].split(), proto_out)
            continue
        head = lines[0].split()  # call INDEX M N K [TACTIC]
        _, index, m, n, k = head[:5]
        tactic = int(head[5]) if len(head) > 5 else 0
        tensors, buffers = [], []
        at = 0
        for line in lines[1:]:
            kind, role, dtype, rows, cols, ld, layout, nbytes = line.split()
            t = Tensor(role, dtype, int(rows), int(cols), int(ld), layout, int(nbytes))
            tensors.append(t)
            if kind == "in":
                buffers.append(body[at:at + t.nbytes])
                at += t.nbytes
            else:
                buffers.append(np.full(t.nbytes, 0xFF, dtype=np.uint8))  # poison, as mxgate's
        status, text = ops[int(index)].invoke(int(m), int(n), int(k), tensors, buffers, tactic)
        if status == "done":
            out = b"".join(b.tobytes() for t, b in zip(tensors, buffers) if t.role.startswith("out"))
            _write(proto_out, "done", out)
        else:
            _write(proto_out, status, text)


def _survey(ops, words, proto_out):
    """Answers "survey OP TARGET INPUTS" (mxgate.survey.survey_lines in this process)."""
    import time

    from . import _native
    from .adapter import describe_exception
    from .survey import survey_lines

    if not _native._HAS_SURVEY:
        _write(proto_out, "unsupported", f"{_native.library_path} has no mxgate_api_survey_cast")
        return
    _, index, target, inputs = words
    next_at = [time.monotonic() + 0.5]

    def progress(done, total):
        now = time.monotonic()
        if now >= next_at[0]:
            next_at[0] = now + 0.5
            _write(proto_out, f"progress {done} {total}")

    try:
        text = survey_lines(ops[int(index)], target, inputs, progress)
    except Exception as e:
        _write(proto_out, "error", f"{ops[int(index)].name}: survey failed: "
                                   f"{describe_exception(e)}")
        return
    _write(proto_out, "done", text)


def main(argv):
    # The protocol keeps the original stdin / stdout; the adapter's prints go to stderr.
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if len(argv) == 2 and argv[1] == "--list":
        from .adapters import SHIPPED

        proto_out.write("".join(s + "\n" for s in SHIPPED).encode())
        return 0
    if len(argv) != 2 or ":" not in argv[1]:
        _write(proto_out, "error", "usage: python -m mxgate._worker MODULE:OBJECT")
        return 2
    try:
        from .adapter import Unavailable

        try:
            adapter = load(argv[1])
        except Unavailable as e:
            _write(proto_out, "unavailable", str(e))
            return 0
    except Exception as e:
        from .adapter import AdapterError, describe_exception

        text = f"{type(e).__name__}: {e}" if isinstance(e, AdapterError) else describe_exception(e)
        _write(proto_out, "error", f"cannot load adapter {argv[1]}: {text}")
        return 0
    try:
        serve(adapter, proto_in, proto_out)
    except (BrokenPipeError, ConnectionResetError):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
