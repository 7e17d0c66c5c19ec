#!/usr/bin/env bash
# On the GPU machine: held-out batches in one device call, each group run by validate_all.py
# in turn and stopped in time to send back what finished. Writes the GPU's name and UUID, a
# default run's output and its profile (`launch-econ --export-json`), then on an H200 runs
# H200_GROUPS priced with the shipped profile (as the H200 record is), on an H100 H100_GROUPS
# priced with that profile and the H100 grid table beside it (docs/validating.md), each group
# by gpu-validate.sh. Everything comes back as OUTDIR/batches.tgz (the device tool returns at
# most eight files), a group's run inside it as GROUP/run.tgz.
#   LIMIT_S=500 bash scripts/gpu-batches.sh OUTDIR "heldout96 heldout68" "heldout96"
# LIMIT_S: seconds from the start by which the archive is written (default 540); set it
# below the device call's own limit. The staged binary is .gpu/bin/launch-econ, unpacked
# first from PACK (a `tar cJf` of .gpu/bin/launch-econ) where .gpu is not carried whole.
set -uo pipefail
out=${1:?usage: gpu-batches.sh OUTDIR H200_GROUPS [H100_GROUPS]}
h200_groups=${2:-}
h100_groups=${3:-}
start=$(date +%s)
limit=${LIMIT_S:-540}
left() { echo $(( limit - ($(date +%s) - start) - 20 )); }
[ -x .gpu/bin/launch-econ ] || tar xJf "${PACK:?no .gpu/bin/launch-econ: carry .gpu or set PACK}"
work=/tmp/gpu-batches
rm -rf "$work" && mkdir -p "$work"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$work/gpu.txt"
timeout 120 .gpu/bin/launch-econ --export-json "$work/profile.json" >"$work/default-run.txt" 2>&1
echo "default run rc $? after $(( $(date +%s) - start )) s"
if grep -q H100 "$work/gpu.txt"; then
    mv "$work/profile.json" "$work/profile-h100.json"
    groups=$h100_groups
    extra=(--profile "$work/profile-h100.json" --also-grid-nodes docs/grid-nodes-h100.json)
else
    mv "$work/profile.json" "$work/profile-h200.json"
    groups=$h200_groups
    extra=()
fi
# Each group through gpu-validate.sh: WORK/GROUP/run.tgz, its log and the GPU's name.
for g in $groups; do
    t=$(left)
    if [ "$t" -lt 60 ]; then echo "$g not started: $t s left"; continue; fi
    mkdir -p "$work/$g"
    LIMIT_S=$t bash scripts/gpu-validate.sh "$g" "$work/$g" "${extra[@]}"
    echo "$g rc $? after $(( $(date +%s) - start )) s"
done
tar czf "$out/batches.tgz" -C "$(dirname "$work")" "$(basename "$work")"
