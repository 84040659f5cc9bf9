#!/usr/bin/env bash
# One call on a lent GPU machine: unpack the build that pack_build.sh made,
# run device_run.sh steps chosen by which GPU was lent, each under its own
# time limit, and after every step pack what the call wrote (new files under
# results/ and the steps' logs) into $OUT/r.tgz, so a call that runs past
# its limit still returns every step that finished. A machine taken back
# mid-call returns nothing: put the steps in order of value.
#
# usage (from the repository root, on the GPU machine):
#   tests/gpu/device_call.sh [--build .device-build/build-h200.txz]
#                            [--on h200 'step:seconds ...'] [--on h100 '...']
#                            [--on other '...']
#   e.g. tests/gpu/device_call.sh --on h200 'l2_loop:200 peers_backward:290' \
#                                 --on h100 'sanitizer:300'
# A GPU with no --on runs nothing (it still reports its name and the tool's
# version, so a call lent the wrong GPU costs only its start) and exits 3.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
archive=.device-build/build-h200.txz
declare -A plan=()
while (($#)); do
  case $1 in
    --build) archive=$2; shift 2 ;;
    --on)
      case $2 in
        h200 | h100 | other) plan[$2]=$3 ;;
        *) echo "device_call.sh: --on takes h200, h100 or other, not '$2'" >&2; exit 2 ;;
      esac
      shift 3 ;;
    *) echo "device_call.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -f $archive ]] || { echo "device_call.sh: no build archive '$archive'" >&2; exit 2; }
tar xJf "$archive" -C "$(dirname "$archive")" || { echo "device_call.sh: cannot unpack '$archive'" >&2; exit 2; }
build_name=$(basename "$archive" .txz)
CFR_BUILD_DIR=$(dirname "$archive")/$build_name
export CFR_BUILD_DIR
final=${OUT:-/tmp/cfr-out}
export OUT=$final/w
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
# An archive may hold only the tools its steps run (the device tool's transfer
# limit counts the repository too): then there is no version to print.
{
  echo "$gpu_name"
  if [[ -x $CFR_BUILD_DIR/app/cuflash-roofline ]]; then
    "$CFR_BUILD_DIR/app/cuflash-roofline" --version
  else
    echo "(no app/cuflash-roofline in $archive)"
  fi
} | tee "$OUT/gpu.txt"
case $gpu_name in
  *GH200*) gpu=other ;;  # Grace Hopper: another memory system than the H200's
  *H200*) gpu=h200 ;;
  *H100*) gpu=h100 ;;
  *) gpu=other ;;
esac

stamp=$(mktemp)
sleep 1  # files written in the stamp's own second would look old
# Written beside and renamed, so a limit that strikes mid-pack leaves the
# previous step's archive whole.
pack() {
  local written
  mapfile -t written < <(find results -newer "$stamp" -type f 2>/dev/null)
  tar czf "$final/r.tgz.tmp" "${written[@]}" -C "$final" w && mv "$final/r.tgz.tmp" "$final/r.tgz"
}

read -ra steps <<<"${plan[$gpu]:-}"
if ((${#steps[@]} == 0)); then
  echo "device_call.sh: no steps for this GPU ($gpu)"
  pack
  exit 3
fi
status=0
for entry in "${steps[@]}"; do
  step=${entry%%:*}
  seconds=${entry#*:}
  [[ $seconds == "$entry" ]] && seconds=300
  if ! [[ $seconds =~ ^[0-9]+$ ]]; then
    echo "device_call.sh: '$entry': the limit after ':' must be whole seconds" >&2
    status=1
    continue
  fi
  echo "== $step (limit $seconds s) at $SECONDS s"
  timeout -s KILL "$seconds" bash tests/gpu/device_run.sh "$step" >"$OUT/$step.txt" 2>&1
  rc=$?
  echo "rc=$rc at $SECONDS s"
  ((rc == 0)) || status=1
  tail -n 25 "$OUT/$step.txt"
  pack
done
pack
exit $status
