#!/usr/bin/env bash
# Runs on a machine with a CUDA GPU, from the repository root, over a build
# made elsewhere (CFR_BUILD_DIR, default build-h200). Steps, in order, as
# arguments: tests, sanitizer, smoke, devices, cli, results, ceilings. Logs go to $OUT (or
# /tmp/cfr-out) so a lent machine sends them back.
set -uo pipefail
build=${CFR_BUILD_DIR:-build-h200}
out=${OUT:-/tmp/cfr-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
tool=$build/app/cuflash-roofline
status=0

step_tests() {
  for binary in "$build"/tests/*/test_*; do
    [[ -x $binary && -f $binary ]] || continue
    echo "== $binary"
    "$binary" 2>&1 | tail -n 40 | tee -a "$out/tests.log" || status=1
  done
}

# Memcheck and racecheck over every kernel on small shapes, ragged N included.
step_sanitizer() {
  local args=(sweep --gpu h200 --seq-lens 17,130 --head-dims 32,128 --both --dtype fp16,fp32
              --backward --warmup 0 --min-samples 1 --max-seconds 0.01 --hot)
  for tool_name in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool_name"
    compute-sanitizer --tool "$tool_name" --error-exitcode 9 "$tool" "${args[@]}" \
      >"$out/sanitizer-$tool_name.log" 2>&1
    local rc=$?
    tail -n 5 "$out/sanitizer-$tool_name.log"
    echo "exit $rc"
    [[ $rc -eq 0 ]] || status=1
  done
}

# A measured report re-derives under audit (exit 0), traffic.by_model included.
step_smoke() {
  "$tool" sweep --seq-lens 4096,16384 --head-dims 64 --both --backward --max-seconds 1 \
    --json "$out/smoke.json" 2>&1 | tail -n 30
  "$tool" audit "$out/smoke.json" | tail -n 3
  local rc=${PIPESTATUS[0]}
  echo "audit exit $rc"
  [[ $rc -eq 0 ]] || status=1
}

# --devices all and --devices 0 on one GPU give the rows of a plain sweep; a
# device id that does not exist fails with one line naming it.
step_devices() {
  local args=(sweep --seq-lens 1024,1000 --head-dims 64 --causal --max-seconds 0.2)
  "$tool" "${args[@]}" --json "$out/devices-plain.json" >/dev/null 2>&1
  "$tool" "${args[@]}" --devices 0 --json "$out/devices-0.json" >/dev/null 2>&1
  "$tool" "${args[@]}" --devices all --json "$out/devices-all.json" >/dev/null 2>&1
  "$tool" "${args[@]}" --devices 7 --json "$out/devices-7.json" >"$out/devices-7.log" 2>&1
  echo "--devices 7: exit $? ($(cat "$out/devices-7.log"))"
  [[ -e $out/devices-7.json ]] && echo "--devices 7 wrote a report" && status=1
}

# The ceiling choices and Ctrl-C on a real device: --gpu a100 on another GPU
# says so; --ceiling FILE uses a saved ceilings report; SIGINT mid-sweep
# leaves a complete, parseable partial report and a non-zero exit.
step_cli() {
  local args=(sweep --seq-lens 4096 --head-dims 64 --causal --max-seconds 0.3)
  "$tool" "${args[@]}" --gpu a100 --json "$out/gpu-a100.json" 2>&1 | grep -iE "not the|ceiling|auditable" | head -5
  if [[ -f results/h200/ceilings.json ]]; then
    "$tool" "${args[@]}" --ceiling results/h200/ceilings.json --json "$out/ceiling-file.json" 2>&1 |
      grep -iE "ceiling|auditable" | head -4
  fi
  timeout --preserve-status -s INT 6 "$tool" sweep --both --backward --head-dims 64,128 \
    --json "$out/interrupted.json" >"$out/interrupted.log" 2>&1
  echo "SIGINT after 6 s: exit $? ($(tail -n 2 "$out/interrupted.log" | tr '\n' ' '))"
}

step_results() {
  mkdir -p results/h200
  "$tool" sweep --causal --head-dims 64,128 --backward --json results/h200/sweep-causal.json \
    --md results/h200/sweep-causal.md 2>"$out/sweep-causal.log" | tail -n 50
  "$tool" sweep --no-causal --head-dims 64,128 --backward --json results/h200/sweep-noncausal.json \
    --md results/h200/sweep-noncausal.md 2>"$out/sweep-noncausal.log" | tail -n 50
  cp results/h200/*.json results/h200/*.md "$out/"
}

step_ceilings() {
  mkdir -p results/h200
  "$tool" ceilings --json results/h200/ceilings.json 2>&1 | tail -n 20
  cp results/h200/ceilings.json "$out/"
}

for step in "$@"; do
  "step_$step"
done
exit $status
