"""A named accumulator model, as `mxgate accumulators --json` lists it (docs/accumulators.md)."""

import json
from dataclasses import dataclass
from typing import Dict, Tuple


@dataclass(frozen=True)
class Accumulator:
    """One model of the registry: name (what check_gemm(accumulator=...) takes, optionally with
    ":param=value,..." overrides of `parameters`), kind ("float" or "aligned_chunks"), parameters
    (name -> value, as the CLI prints them: strings such as "14" or "truncate"), a one-line
    description and the sources of its numbers."""

    name: str
    kind: str
    parameters: Dict[str, str]
    description: str
    source: str

    def __str__(self) -> str:
        return self.name

    @classmethod
    def list_from_json(cls, text: str) -> Tuple["Accumulator", ...]:
        """The models of `mxgate accumulators --json` text, in registry order."""
        return tuple(
            cls(name=m["name"], kind=m["kind"], parameters=dict(m["parameters"]),
                description=m["description"], source=m["source"])
            for m in json.loads(text)
        )
