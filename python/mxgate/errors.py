"""The exceptions of the mxgate package (docs/python.md §3.2): one base class, `mxgate.Error`,
under which is everything the package raises on purpose, each carrying the data a caller acts on.

    Error                      message
    ├── InputError (ValueError)  verb, option: bad input, with the CLI's message
    │   └── AdapterError         a malformed adapter / op declaration, an op output that
    │                            does not fit its call
    ├── Unsupported            reason: an op declines a case (MXGATE_UNSUPPORTED)
    ├── Unavailable            reason: what an adapter wraps is absent here
    ├── OutOfMemory (MemoryError)  the library could not allocate
    └── LibraryError (RuntimeError)  status: any other failure of the library

InputError and AdapterError are ValueErrors, OutOfMemory a MemoryError and LibraryError a
RuntimeError, the types these failures had before the base class existed, so `except ValueError`
keeps working.
"""

import re
from typing import Optional

_OPTION = re.compile(r"--[a-z0-9][a-z0-9-]*(?=[: ])")


class Error(Exception):
    """Base of every exception mxgate raises on purpose. message: the text, also str(e);
    status: the library's status for this kind of failure (include/mxgate/api.h: 2 input,
    4 memory, 5 runtime, 6 internal; None where the library has none)."""

    status: Optional[int] = None

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InputError(Error, ValueError):
    """Bad input (the library's status 2, the CLI's exit code 2): the CLI's message without the
    `mxgate VERB: ` prefix. verb: the CLI verb whose input it was ("gemm"; "property" for
    mxgate.check; None for checks made in Python); option: the CLI option the message starts
    with ("--a-scales"), None when it names none."""

    status = 2

    def __init__(self, message: str = "", verb: Optional[str] = None) -> None:
        super().__init__(message)
        self.verb = verb
        match = _OPTION.match(message)
        self.option: Optional[str] = match.group(0) if match else None


class AdapterError(InputError):
    """A malformed adapter or op declaration, or an op's output that does not fit its call."""


class Unsupported(Error):
    """Raised by an op to decline a case (MXGATE_UNSUPPORTED). reason: why (also str(e))."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class Unavailable(Error):
    """Raised by Adapter.check_available (or while building an adapter) when what it wraps is
    absent here: an optional module, a device. reason: what is missing (also str(e)). The worker
    reports it as an environment error; the pytest plugin as a skip."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class OutOfMemory(Error, MemoryError):
    """The library could not allocate (status 4)."""

    status = 4


class LibraryError(Error, RuntimeError):
    """Any other failure of the library: status 5 (a runtime error, e.g. a heatmap file the OS
    refuses to write) or 6 (a non-standard exception: a bug in mxgate)."""

    def __init__(self, message: str = "", status: int = 5) -> None:
        super().__init__(message)
        self.status = status
