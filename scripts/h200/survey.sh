#!/bin/sh
# scripts/h200/survey.sh MXGATE LIBMXGATE OUT_DIR [PART...]: on a GPU host, the Python adapters'
# casts surveyed over all 2^32 fp32 inputs, with the seconds per format, and the pytest plugin
# over the shipped adapters (docs/python.md §14.2). MXGATE is an `mxgate` program (any preset:
# the adapters' device work runs in their workers), LIBMXGATE a cuda-preset libmxgate.so (its
# device cast sweep serves the device ops: `cmake --preset cuda && cmake --build build/cuda
# --target mxgate_capi`); this tree's python/ is the package. PARTs (default all, in order):
#   device   `mxgate survey --cast-inputs all` of torch CUDA, Triton and JAX (device ops)
#   host     the same of torch CPU and ml_dtypes (host ops), and own.log: the libraries' own
#            fp32 -> e4m3fn cast over all inputs, timed alone (scripts/h200/own_cast_time.py)
#   pytest   pytest -p mxgate.pytest_plugin --mxgate-impl over every shipped adapter
#   formats  nothing more: formats.tsv (written after every run) from the survey-*.json present
# Each survey runs under `timeout -s INT` (MXGATE_SURVEY_LIMIT seconds, default 400; killed 30 s
# later): an interrupted one writes its partial report once the piece that runs ends.
# MXGATE_SURVEY_CASES (default 100) cases per property, MXGATE_PYTEST_CASES (30) and
# MXGATE_PYTEST_LIMIT (400) for the plugin, MXGATE_OWN_LIMIT (300) for own_cast_time.py. OUT_DIR gets survey-NAME.{md,json,log},
# formats.tsv (per op and format: the sweep's seconds and, apart, the setup's: run tables and
# the op's warm-up call), status.log, env.log, own.log, pytest.log.
set -u
if [ $# -lt 3 ]; then
  echo "usage: scripts/h200/survey.sh MXGATE LIBMXGATE OUT_DIR [device|host|pytest|formats...]" >&2
  exit 2
fi
MX=$1
LIB=$2
O=$3
shift 3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MXGATE_PYTHON=${MXGATE_PYTHON:-python3}
PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
MXGATE_LIBRARY=$LIB
MXGATE_PROGRESS=1
MXGATE_PYTHON_TIMEOUT=${MXGATE_PYTHON_TIMEOUT:-600}
XLA_PYTHON_CLIENT_PREALLOCATE=false  # the sweep's inputs need 16 GiB of the device beside JAX
export MXGATE_PYTHON PYTHONPATH MXGATE_LIBRARY MXGATE_PROGRESS MXGATE_PYTHON_TIMEOUT \
  XLA_PYTHON_CLIENT_PREALLOCATE
mkdir -p "$O"
{
  date -u
  nvidia-smi -L 2>&1
  echo "cores: $(nproc)"
  "$MXGATE_PYTHON" -c "
import mxgate, numpy
print('libmxgate', mxgate.library_path, 'device:', mxgate._native.device_kind() or 'none')
for m in ('torch', 'triton', 'jax', 'ml_dtypes'):
    try:
        print(m, __import__(m).__version__)
    except Exception as e:
        print(m, 'missing:', e)
print('numpy', numpy.__version__)"
} > "$O/env.log" 2>&1
survey() {  # NAME SPEC
  start=$(date +%s.%N)
  timeout -s INT -k 30 "${MXGATE_SURVEY_LIMIT:-400}" "$MX" survey --impl "$2" --cast-inputs all \
    --cases "${MXGATE_SURVEY_CASES:-100}" --json --markdown "$O/survey-$1.md" \
    > "$O/survey-$1.json" 2> "$O/survey-$1.log"
  r=$?
  echo "survey $1 rc=$r $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s" |
    tee -a "$O/status.log"
}
P=py:mxgate.adapters
for part in ${*:-device host pytest}; do
  case $part in
    device)
      survey torch_cuda $P.torch:TorchCudaAdapter
      survey triton $P.triton:TritonAdapter
      survey jax $P.jax:JaxAdapter ;;
    host)
      survey torch_cpu $P.torch:TorchCpuAdapter
      survey ml_dtypes $P.ml_dtypes:MlDtypesAdapter
      timeout -s INT -k 10 "${MXGATE_OWN_LIMIT:-300}" "$MXGATE_PYTHON" \
        "$ROOT/scripts/h200/own_cast_time.py" > "$O/own.log" 2>&1 ;;
    pytest)
      specs=$("$MXGATE_PYTHON" -c "from mxgate.adapters import SHIPPED; print(','.join(SHIPPED))")
      start=$(date +%s)
      # The plugin stops starting items 60 s before the limit (--mxgate-timeout), so the run
      # ends with its summary; each implementation's line (counts, seconds, failed items' cases
      # and CLI lines) is written as its items end, unbuffered.
      limit=${MXGATE_PYTEST_LIMIT:-400}
      PYTHONUNBUFFERED=1 timeout -s INT -k 30 "$limit" "$MXGATE_PYTHON" -m pytest -q \
        -p no:cacheprovider -p mxgate.pytest_plugin --mxgate-impl "$specs" \
        --mxgate-cases "${MXGATE_PYTEST_CASES:-30}" --mxgate-timeout $((limit > 120 ? limit - 60 : limit / 2)) \
        -rfEs "$ROOT/python/mxgate" > "$O/pytest.log" 2>&1
      echo "pytest rc=$? $(( $(date +%s) - start )) s" | tee -a "$O/status.log" ;;
    formats) ;;
    *) echo "survey.sh: unknown part '$part' (device host pytest formats)" >&2; exit 2 ;;
  esac
done
# Seconds per op and format, from the surveys' JSON.
"$MXGATE_PYTHON" - "$O" > "$O/formats.tsv" <<'PY'
import glob, json, sys
# sweep_s: the timed sweep over the inputs (the figure the 1 s per format goal is about);
# setup_s: before it, the claims' run tables, the resident inputs and the op's warm-up call (a
# compile, a jit); op_s: of the sweep, the seconds inside the op's calls (empty: not measured).
print("implementation\top\ttarget\tinputs\tsweep_s\tsetup_s\tsweep<=1s\terror\tbit-exact with"
      "\top_s")
for f in sorted(glob.glob(sys.argv[1] + "/survey-*.json")):
    try:
        d = json.load(open(f))
    except ValueError:
        continue
    for i in d["implementations"]:
        for c in i["casts"]:
            sweep = c.get("seconds")
            goal = "" if sweep is None or c["error"] else "yes" if sweep <= 1 else "NO"
            print("\t".join([i["name"], c["op"], c.get("target", ""), str(c.get("inputs", "")),
                             str(sweep if sweep is not None else ""),
                             str(c.get("setup_seconds", "")), goal, c["error"][:80],
                             ";".join(c.get("matches", [])),
                             str(c.get("op_seconds", ""))]))
PY
cat "$O/formats.tsv"
