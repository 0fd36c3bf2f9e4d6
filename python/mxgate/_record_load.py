"""Reading a flight record back (docs/record.md §4): one call's folder checked against its
manifest (every tensor file present, of its size, of its sha256, of a known dtype; the
completion marker present and naming this manifest) and its mxgate operands assembled from the
recorded views (transposes and cuts of padded grids as the binding declared them).
"""

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

from ._record import SCHEMA
from ._record_bind import contract_from_fields
from ._record_tensors import BadDump, load


@dataclass
class Loaded:
    folder: str
    manifest: Dict[str, Any]
    operands: Dict[str, np.ndarray]  # role -> logical array (out: the judged output)
    dtypes: Dict[str, str]  # role -> record dtype
    crashed: Optional[str] = None  # why the call did not complete, if it did not
    problems: List[str] = field(default_factory=list)  # bad-dump messages (exit 2)

    @property
    def family(self):
        return self.manifest["op"]["family"]

    @property
    def contract(self):
        return contract_from_fields(self.family, self.manifest["op"]["contract"])


def read_manifest(folder):
    path = os.path.join(folder, "manifest.json")
    if not os.path.isfile(path):
        raise BadDump(f"{path}: missing (a record folder holds manifest.json)")
    try:
        with open(path, "rb") as f:
            raw = f.read()
        m = json.loads(raw)
    except (OSError, ValueError) as e:
        raise BadDump(f"{path}: not a JSON manifest: {e}") from None
    if not isinstance(m, dict) or m.get("schema") != SCHEMA:
        raise BadDump(f"{path}: schema {m.get('schema') if isinstance(m, dict) else None!r}, "
                      f"not {SCHEMA}")
    for key in ("op", "roles", "tensors", "m", "n", "k"):
        if key not in m:
            raise BadDump(f"{path}: no '{key}'")
    return m, raw


def _assemble(folder, m, role, spec, cache):
    name = spec.get("tensor")
    if name not in m["tensors"]:
        raise BadDump(f"{os.path.join(folder, 'manifest.json')}: role {role} names tensor "
                      f"'{name}', which the manifest does not describe (missing tensor)")
    if name not in cache:
        cache[name] = load(folder, m["tensors"][name])
    a = cache[name]
    if spec.get("transpose"):
        a = a.T
    if spec.get("cols") is not None:
        a = a[:, :spec["cols"]]
    if spec.get("reshape") is not None:
        a = a.reshape(spec["reshape"])
    return np.ascontiguousarray(a), m["tensors"][name]["dtype"]


def load_record(folder):
    """A record, read and checked. Raises BadDump for a manifest that cannot be read; a bad
    tensor or marker is a problem listed on the result (the other tensors still load)."""
    m, raw = read_manifest(folder)
    out = Loaded(folder, m, {}, {})
    marker = os.path.join(folder, "complete")
    if not os.path.isfile(marker):
        out.crashed = (f"{marker}: missing: the call did not complete (crashed or raised"
                       + (f": {m['error']}" if m.get("error") else "") + ")")
        out.problems.append(out.crashed)
    else:
        with open(marker) as f:
            said = f.read().strip()
        if said != hashlib.sha256(raw).hexdigest():
            out.problems.append(f"{marker}: names another manifest than "
                                f"{os.path.join(folder, 'manifest.json')} (edited after the "
                                f"call?)")
    cache = {}
    for role, spec in m["roles"].items():
        try:
            out.operands[role], out.dtypes[role] = _assemble(folder, m, role, spec, cache)
        except BadDump as e:
            out.problems.append(str(e))
    for name, d in m["tensors"].items():  # every file, named by a role or not (out.before)
        if name not in cache:
            try:
                cache[name] = load(folder, d)
            except BadDump as e:
                out.problems.append(str(e))
    return out


def record_folders(directory):
    """The record folders under `directory` (itself, if it is one), in sequence order."""
    if os.path.isfile(os.path.join(directory, "manifest.json")):
        return [directory]
    if not os.path.isdir(directory):
        raise BadDump(f"{directory}: no such record directory")
    return [os.path.join(directory, f) for f in sorted(os.listdir(directory))
            if os.path.isdir(os.path.join(directory, f))]
