#!/bin/sh
# moe-torch.sh BUILD_DIR OUT_DIR [CASES]: on a GPU host with torch, every MoE layer property
# (docs/moe.md §2) on the torch twin of the MoE example (CUDA, then the CPU), and
# moe.end_to_end on its faulty twin (M4 in torch), which must fail (exit 1).
# Writes OUT_DIR/moe-torch.log and OUT_DIR/moe-status.log.
set -u
B=${1:?usage: moe-torch.sh BUILD_DIR OUT_DIR [CASES]}
O=${2:?usage: moe-torch.sh BUILD_DIR OUT_DIR [CASES]}
CASES=${3:-100}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$O"
export MXGATE_PYTHON=${MXGATE_PYTHON:-python3} PYTHONPATH=$ROOT/python
export MXGATE_LIBRARY=${MXGATE_LIBRARY:-$B/capi/libmxgate.so} MXGATE_CLI=$B/tools/mxgate/mxgate
rc=0
for obj in MoEExampleTorch MoEExampleTorchCpu; do
  start=$(date +%s)
  "$MXGATE_CLI" property 'moe.*' --impl "py:mxgate.adapters.moe_example_torch:$obj" \
    --cases "$CASES" --seed 1 >> "$O/moe-torch.log" 2>&1
  r=$?
  echo "moe.* on $obj rc=$r $(( $(date +%s) - start ))s" | tee -a "$O/moe-status.log"
  [ $r -eq 0 ] || rc=$r
done
start=$(date +%s)
"$MXGATE_CLI" property moe.end_to_end \
  --impl py:mxgate.adapters.moe_example_torch:TopkWeightDroppedTorch --cases "$CASES" \
  --seed 1 >> "$O/moe-torch.log" 2>&1
r=$?
echo "moe.end_to_end on TopkWeightDroppedTorch rc=$r (must be 1) $(( $(date +%s) - start ))s" \
  | tee -a "$O/moe-status.log"
[ $r -eq 1 ] || rc=1
exit $rc
