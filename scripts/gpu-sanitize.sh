#!/usr/bin/env bash
# Runs the staged test executables and a short launch-econ run under compute-sanitizer tools,
# on the GPU machine, from the repository root, after `bash ../shared/gpu/stage.sh` here.
#   bash scripts/gpu-sanitize.sh OUTDIR [TOOL...]        (default: memcheck racecheck synccheck initcheck)
# Tests that cannot hold under a sanitizer are skipped, each for a stated reason:
#   no_gpu_*            hides the GPU from a child process; the tool prints its own lines there
#   *cycles*, ctrl_c*   1000-cycle and signal timing tests: minutes under instrumentation
#   *returns_device_memory, keeper_holds_memory, *one_graph_across*
#                       compare free device memory, which the tool itself allocates
#   a_100_mb_*          host-only streaming test, 100 MB: nothing for a GPU tool to check
# Children are not followed (--target-processes application-only): CLI tests that spawn
# launch-econ check its output; the launch-econ run below is sanitized on its own.
set -uo pipefail
out=${1:?usage: gpu-sanitize.sh OUTDIR [TOOL...]}
shift
tools=${*:-memcheck racecheck synccheck initcheck}
per_tool=${SANITIZE_TIMEOUT:-90}
bash .gpu/run.sh exec true >/dev/null 2>&1 # restores the build paths the tests expect
export PATH=$PWD/.gpu/bin:$PATH
skips=(--skip no_gpu --skip cycles --skip ctrl_c --skip returns_device_memory --skip keeper_holds_memory --skip one_graph_across --skip a_100_mb)
for tool in $tools; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  log="$out/sanitize-$tool.log"
  : >"$log"
  start=$(date +%s)
  for t in .gpu/tests/*; do
    left=$((per_tool - ($(date +%s) - start)))
    if [ "$left" -le 0 ]; then echo "== $(basename "$t"): not run (time budget spent)" >>"$log"; continue; fi
    echo "== $(basename "$t")" >>"$log"
    timeout "$left" compute-sanitizer --tool "$tool" "${extra[@]}" --target-processes application-only \
      "$t" --include-ignored --test-threads=1 "${skips[@]}" >>"$log" 2>&1
    echo "exit $?" >>"$log"
  done
  echo "== launch-econ 16 --trials 1 --warmup 0 --reps 1" >>"$log"
  timeout 60 compute-sanitizer --tool "$tool" "${extra[@]}" launch-econ 16 --trials 1 --warmup 0 --reps 1 >>"$log" 2>&1
  echo "exit $?" >>"$log"
  echo "### $tool"
  grep -E "^== |SUMMARY|^exit|test result" "$log" | grep -vE "test result: ok. 0 passed"
done
