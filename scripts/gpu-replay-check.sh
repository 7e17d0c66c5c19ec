#!/usr/bin/env bash
# On the GPU machine: makes a PyTorch decode-step trace and PyTorch's own CUDAGraph timing,
# then prices the same walk with `launch-econ replay`. Results under OUTDIR.
#   bash scripts/gpu-replay-check.sh OUTDIR
set -uo pipefail
out=${1:?usage: gpu-replay-check.sh OUTDIR}
export PATH=$PWD/.gpu/bin:$PATH
PYTHONUNBUFFERED=1 python3 scripts/torch_decode.py --out "$out" --layers 8 >"$out/torch.log" 2>&1 || { tail -20 "$out/torch.log"; exit 1; }
cat "$out/torch_results.json"
launch-econ replay "$out/decode_trace.json" --summary --top 8
launch-econ replay "$out/decode_trace.json" --trials 10 --reps 20 --export-json "$out/replay.json"
launch-econ replay "$out/decode_trace.json" --trials 5 --reps 10 --host-overhead-us 5 | tail -14
