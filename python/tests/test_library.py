"""libmxgate.so is portable and self-contained: it needs only glibc (libc, libm, the loader) at
symbol versions no newer than 2.36 (Debian 12, where it is built; any newer glibc, e.g. the
H200 host's Ubuntu, loads it), exports exactly the functions of include/mxgate/api.h and
nothing else (its static libstdc++ stays local, so a process that already has another libstdc++,
like Python with torch, does not mix the two), and works after another libstdc++ is loaded
globally. Checked with objdump (binutils) on the library the package loaded.
Not covered: loading on another distribution (the H200 run does that)."""

import re
import subprocess
import sys

import mxgate
from support import REPO

ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"}
NEWEST_GLIBC = (2, 36)


def objdump(flag):
    return subprocess.run(["objdump", flag, str(mxgate.library_path)], capture_output=True,
                          text=True, check=True).stdout


def header_functions():
    text = (REPO / "include" / "mxgate" / "api.h").read_text()
    return set(re.findall(r"MXGATE_API_EXPORT [^(]*?\b(mxgate_api_\w+)\(", text))


# Guards against a dependency the H200 host may lack or have in another version (libstdc++,
# libgcc_s, libz): the library must need glibc alone.
def test_needs_only_glibc():
    needed = set(re.findall(r"NEEDED\s+(\S+)", objdump("-p")))
    assert needed <= ALLOWED_NEEDED, needed - ALLOWED_NEEDED


# Guards against a glibc symbol newer than the build machine's 2.36 creeping in (a newer
# toolchain or a static library built elsewhere).
def test_glibc_symbol_versions_are_at_most_2_36():
    found = re.findall(r"GLIBC_(\d+\.\d+)", objdump("-T"))
    versions = {tuple(map(int, v.split("."))) for v in found}
    assert versions and max(versions) <= NEWEST_GLIBC, max(versions)


# Guards against exporting the reference's or libstdc++'s symbols (they would interpose on the
# host process's own) and against a header function missing from the library.
def test_exports_exactly_the_c_abi():
    defined = {
        line.split()[-1]
        for line in objdump("-T").splitlines()
        if re.match(r"[0-9a-f]{16} ", line) and "*UND*" not in line
    }
    assert defined == header_functions(), defined ^ header_functions()
    # eight verbs-and-results functions, _check, _vocabulary, _survey_cast, _survey_cast_calls
    # and five _device_*
    assert len(defined) == 17


# Guards against the static libstdc++ clashing with a libstdc++ the process loaded first and
# globally (torch does): exceptions and strings must still cross the library intact.
def test_works_after_another_libstdcxx_is_loaded_globally():
    script = (
        "import ctypes, ctypes.util, numpy as np\n"
        "ctypes.CDLL(ctypes.util.find_library('stdc++') or 'libstdc++.so.6', ctypes.RTLD_GLOBAL)\n"
        "import mxgate\n"
        "assert mxgate.encode([448.0], 'e4m3fn', 'ocp_mx').tolist() == [0x7e]\n"
        "try:\n"
        "    mxgate.encode([1.0], 'e4m3fn', 'nope')\n"
        "except ValueError as e:\n"
        "    assert str(e).startswith(\"unknown convention 'nope'\"), e\n"
        "else:\n"
        "    raise SystemExit('no ValueError')\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stdout + r.stderr
