#!/usr/bin/env bash
# On the GPU machine: runs validate_all.py over GROUPS (comma-separated) with the staged
# launch-econ, writes the run under /tmp and sends it back as one archive (the device tool
# returns at most eight files), with the GPU's name and UUID and the run's table.
#   bash scripts/gpu-validate.sh GROUPS OUTDIR [--profile FILE]
# On a GPU other than the H200, pass --profile of that GPU (`launch-econ --export-json FILE`
# there first): see docs/validating.md. LIMIT_S (seconds, optional) stops the run that long
# after it starts, so the archive of what finished is still written within a device call's
# own limit (validate.py writes each group's validation.json after every walk).
set -uo pipefail
groups=${1:?usage: gpu-validate.sh GROUPS OUTDIR [--profile FILE]}
out=${2:?usage: gpu-validate.sh GROUPS OUTDIR [--profile FILE]}
shift 2
run=/tmp/validate-run
rm -rf "$run"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
limit=()
[ -n "${LIMIT_S:-}" ] && limit=(timeout -k 5 "$LIMIT_S")
"${limit[@]}" python3 scripts/validate_all.py --out "$run" --groups "$groups" \
    --launch-econ .gpu/bin/launch-econ "$@" >"$out/validate.log" 2>&1
rc=$?
echo "validate_all rc $rc" | tee -a "$out/validate.log"
tail -12 "$out/validate.log"
tar czf "$out/run.tgz" -C "$(dirname "$run")" "$(basename "$run")"
exit $rc
