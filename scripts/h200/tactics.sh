#!/bin/sh
# scripts/h200/tactics.sh STAGE OUT_DIR [CASES]: on the H200, every property over every tactic of
# the cuBLASLt plugin (8 heuristic results per case, docs/plugins.md §3.6) on the cuda backend, and
# over every tile of the Triton FP8 tl.dot adapter (one op, a tactic per tile, docs/python.md
# §11.9) on the host backend (its ops take host memory and copy to the GPU). STAGE holds what the
# run needs, built elsewhere: bin/mxgate (cuda preset), plugins/libmxgate_cublaslt.so,
# lib/libmxgate.so (the library the Python worker loads) and python/ (the package). Logs, the
# `impls --json` listing and a summary go to OUT_DIR; exit 0 when every step ran (a failing
# property is a result, written down, not an exit code).
set -u
S=${1:?usage: scripts/h200/tactics.sh STAGE OUT_DIR [CASES]}
O=${2:?usage: scripts/h200/tactics.sh STAGE OUT_DIR [CASES]}
CASES=${3:-30}
mkdir -p "$O"
MXGATE=$S/bin/mxgate
CUBLASLT=$S/plugins/libmxgate_cublaslt.so
export MXGATE_LIBRARY=$S/lib/libmxgate.so MXGATE_PYTHON=${MXGATE_PYTHON:-python3}
export PYTHONPATH=$S/python${PYTHONPATH:+:$PYTHONPATH}
# libcublasLt.so.13: the toolkit's, else a pip nvidia-cublas copy (as scripts/run-nvidia-plugins).
if ! ldconfig -p | grep -q libcublasLt.so.13; then
  f=$(find /usr /opt -name 'libcublasLt.so.13' 2>/dev/null | head -n 1)
  [ -n "$f" ] && export LD_LIBRARY_PATH=$(dirname "$f")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
step() {  # step NAME SECONDS COMMAND...: run, log, time; status.log gets one line
  name=$1 limit=$2
  shift 2
  start=$(date +%s)
  # Line-buffered: a step cut off by its limit keeps every line it printed.
  timeout "$limit" stdbuf -oL "$@" > "$O/$name.log" 2>&1
  echo "$(date -u +%H:%M:%S) $name rc=$? $(( $(date +%s) - start ))s" | tee -a "$O/status.log"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$MXGATE_PYTHON" -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
} > "$O/env.log" 2>&1
step impls-cublaslt 60 "$MXGATE" impls --json --impl "$CUBLASLT"
cp "$O/impls-cublaslt.log" "$O/impls-cublaslt.json"
# The two runs at once (one GPU, separate processes): every property over every tactic of the 24
# cuBLASLt ops (tactic i = heuristic result i), and over every tile of the Triton dot_fp8.
step property-cublaslt "${MXGATE_CUBLASLT_S:-170}" "$MXGATE" property all \
  --impl "$CUBLASLT:cublaslt" --backend cuda --cases "$CASES" &
step property-triton "${MXGATE_TRITON_S:-150}" "$MXGATE" property all \
  --impl py:mxgate.adapters.triton_dot:TritonDotAdapter --backend host \
  --cases "${MXGATE_TRITON_CASES:-$CASES}" &
wait
# The summary: per property and tactic, pass / fail / unsupported, and each failure's lines.
for f in property-cublaslt property-triton; do
  echo "== $f"
  grep -E "^[a-z_0-9.]+ \[.*\] on " "$O/$f.log" | sed -E 's/ on (host|cuda), seed .* \.\.\. / -> /' |
    cut -c1-160
  grep -E "^    (shrunk case|failure|element|reproduce):" "$O/$f.log" | cut -c1-400
done > "$O/summary.txt"
cat "$O/status.log"
