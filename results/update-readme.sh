#!/usr/bin/env bash
# Regenerates the README's results tables from the committed reports with the
# tool's own `table` command, and the chart with `plot`, so no measured number
# is typed by hand. Usage:
#   results/update-readme.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${1:-build}/app/cuflash-roofline
columns='kernel,dir,N,d,causal,tile,unit,median ms,TFLOPS,% roof,AI,regime,check'

# A report is there as FILE or, over 1 MB, as FILE.gz (results/README.md); the
# tool reads FILE from FILE.gz.
present() { [[ -f $1 || -f $1.gz ]]; }

section() {
  local title=$1 report=$2 chosen=${3:-$columns}
  echo "#### $title"
  echo
  echo "\`cuflash-roofline table $report --format md --status ok --columns '$chosen'\`"
  echo
  "$tool" table "$report" --format md --status ok --columns "$chosen" --no-legend
  echo
}
# The profiled rows: every kernel, fa2_mma included, with what the counters say.
profiled_columns='kernel,dir,N,d,causal,tile,median ms,TFLOPS,DRAM model,regime,% roof,regime (ncu DRAM),% roof (ncu DRAM),limiter,check'

# One device call's comparison of ours against a peer on the same axes, row
# by row (compare exits 1 when a row is SLOWER: the finding, not a failure
# of this script). RATIO, optional, words the ratio.
# usage: pair_section TITLE BASE NEW MATCH [RATIO]
pair_section() {
  local title=$1 base=$2 new=$3 match=$4 ratio=${5:-ratio = new ÷ base median time}
  present $base && present $new || return 0
  echo "#### $title"
  echo
  echo "\`cuflash-roofline compare $base $new --match-kernel $match\` ($ratio;"
  echo "the rows only one report has are left out here)"
  echo
  echo '```'
  "$tool" compare "$base" "$new" --match-kernel "$match" | grep -v '^only in ' || true
  echo '```'
  echo
}

# fa2_mma against torch's flash (issue 9), issue 22's fa3_wgmma and issue
# 19's backward kernels against torch, each pair from one device call.
kernel_peer_sections() {
  local peers=results/h200/peers
  pair_section "fa2_mma vs torch SDPA flash on the same axes ($peers/)" "$peers/torch-sdpa.json" \
    "$peers/sweep-peer-axes.json" torch_sdpa_flash=fa2_mma \
    "base: torch, new: ours; ratio = ours ÷ torch's median time"
  local fa3=results/h200/fa3 bwd=results/h200/backward
  pair_section "fa3_wgmma vs torch SDPA cuDNN, issue 22's axes ($fa3/)" \
    "$fa3/torch-sdpa-forward.json" "$fa3/sweep-fa3.json" torch_sdpa_cudnn=fa3_wgmma
  pair_section "fa3_wgmma vs fa2_mma, the same run ($fa3/sweep-fa3.json)" \
    "$fa3/sweep-fa3.json" "$fa3/sweep-fa3.json" fa2_mma=fa3_wgmma
  local kernel
  for kernel in fa2_bwd_2d fa2_bwd; do
    pair_section "$kernel vs torch SDPA flash backward, issue 19's axes ($bwd/)" \
      "$bwd/torch-sdpa-backward.json" "$bwd/sweep-fa2-bwd.json" "torch_sdpa_flash=$kernel"
  done
}

# Issue 25's served shapes (decode, GQA, speculative, paged): our rows, then
# each against the fastest torch backend of its shape, from one device run
# (tests/gpu/device_run.sh served peers_served), and fa2_mma's GQA prefill
# against torch's flash.
served_columns='kernel,dtype,B,H,Hkv,N,Nk,page,d,causal,median ms,GB/s,% BW,TFLOPS,% roof,regime,check'
served_section() {
  local served=results/h200/served peers=results/h200/peers/served
  present $served/decode.json && present $peers/torch_sdpa_decode.json || return 0
  for name in decode decode-batch decode-mha decode-mha-batch speculative paged paged-speculative \
    gqa-prefill; do
    if present $served/$name.json; then
      section "H200, served shapes: $name ($served/$name.json)" "$served/$name.json" \
        "$served_columns"
    fi
  done
  local pairs=()
  for pair in torch_sdpa_decode:decode torch_sdpa_decode:decode-batch \
    torch_sdpa_decode_batch:decode-batch torch_sdpa_decode_mha:decode-mha \
    torch_sdpa_decode_mha_batch:decode-mha-batch \
    torch_sdpa_speculative:speculative; do
    local theirs=$peers/${pair%%:*}.json ours=$served/${pair#*:}.json
    if present $theirs && present $ours; then pairs+=("$theirs" "$ours"); fi
  done
  echo "#### Served shapes: ours ÷ the fastest torch SDPA backend of each shape (each pair from one device session)"
  echo
  echo "\`cuflash-roofline compare PEERS OURS ... --by fastest\` over the pairs below (base: torch's"
  echo "fastest backend at the shape, new: ours; ratio = ours ÷ theirs, below 1 is faster; rows only"
  echo "one side has are left out here: the peers skip paged caches, torch SDPA reads a contiguous one)"
  echo
  echo '```'
  "$tool" compare "${pairs[@]}" --by fastest | grep -v '^only in ' || true
  echo '```'
  echo
  local profiled_served='kernel,dtype,B,H,Hkv,N,Nk,page,causal,median ms,DRAM model,L2-aware GB,ncu DRAM GB,DRAM model err,% roof (ncu DRAM),limiter,check'
  for name in decode speculative prefill mha-b32; do
    if present results/h200/profile/served-$name.json; then
      section "H200, served rows profiled by Nsight Compute: the DRAM model against the counters (results/h200/profile/served-$name.json)" \
        "results/h200/profile/served-$name.json" "$profiled_served"
    fi
  done
  if present $peers/torch_sdpa_gqa_prefill.json && present $served/gqa-prefill.json; then
    echo "#### GQA prefill: fa2_mma ÷ torch SDPA flash (one device run)"
    echo
    echo '```'
    "$tool" compare "$peers/torch_sdpa_gqa_prefill.json" "$served/gqa-prefill.json" \
      --match-kernel torch_sdpa_flash=fa2_mma | grep -v '^only in ' || true
    echo '```'
    echo
  fi
}

# Issue 20's energy: the rows of the energy sweep (tests/gpu/device_run.sh
# energy) with their joules, and the energy roofline (plot --energy) once the
# energy ceilings are measured too (device_run.sh ceilings_energy); until
# then the section says so.
energy_columns='kernel,N,d,causal,median ms,TFLOPS,J/launch,W,GFLOP/J,idle W,energy SM MHz,max temp C,check'
energy_section() {
  local sweep=results/h200/energy/sweep-energy.json ceilings=results/h200/energy/ceilings-energy.json
  local default=results/h200/energy/sweep-default-energy.json
  local sweeps=("$sweep")
  present $default && sweeps+=("$default")
  if present $sweep && present $ceilings; then
    "$tool" plot --energy "${sweeps[@]}" --ceilings "$ceilings" --title "H200: energy roofline" \
      --out results/h200/energy-roofline.svg >&2
    echo "The energy roofline (\`plot --energy\`, docs/energy.md): the counted FLOPs per joule of the"
    echo "board of each row of \`${sweeps[*]}\` against its AI, under the energy ceilings of"
    echo "\`$ceilings\` (\`ceilings --energy\`): solid, min(FLOP/J, AI × the DRAM copy's B/J) per"
    echo "compute unit; dashed, Choi et al.'s combined curve 1/(1/FLOP_per_J + 1/(AI × B_per_J)). Board"
    echo "energy, idle power included: reference lines, not bounds (a kernel at a lower clock can beat them)."
    echo
    echo "![energy roofline of the H200](results/h200/energy-roofline.svg)"
    echo
    echo "#### H200 energy ceilings ($ceilings)"
    echo
    echo '```'
    "$tool" table "$ceilings"
    echo '```'
    echo
  else
    echo "The energy roofline (\`plot --energy\`, docs/energy.md) is not measured yet: it needs"
    echo "\`$ceilings\` (\`tests/gpu/device_run.sh ceilings_energy\`) beside \`$sweep\`"
    echo "(\`tests/gpu/device_run.sh energy\`)."
    echo
  fi
  if present $sweep; then
    section "H200, the board's energy per row ($sweep)" "$sweep" "$energy_columns"
  fi
  if present $default; then
    section "H200, the default sweep's energy per row ($default)" "$default" "$energy_columns"
  fi
}

generated=$(
  section "H200, causal (results/h200/sweep-causal.json)" results/h200/sweep-causal.json
  section "H200, non-causal (results/h200/sweep-noncausal.json)" results/h200/sweep-noncausal.json
  if present results/h200/profile/default.json; then
    section "H200, every kernel profiled by Nsight Compute (results/h200/profile/default.json)" \
      results/h200/profile/default.json "$profiled_columns"
  fi
  kernel_peer_sections
  served_section
)
"$tool" plot results/h200/peers/sweep-peer-axes.json results/h200/peers/torch-sdpa.json \
  --ceilings results/h200/ceilings.json --title "H200: fa2_mma, fa1_wmma and torch SDPA" \
  --out results/h200/peers.svg
if present results/h200/fa3/sweep-fa3.json; then
  # The wgmma and mma.sync roofs are in the instruction-roof ceilings (ceilings --instruction-roofs).
  "$tool" plot results/h200/fa3/sweep-fa3.json results/h200/fa3/torch-sdpa-forward.json \
    --ceilings results/h200/limiter/ceilings.json --title "H200: fa3_wgmma, fa2_mma and torch SDPA" \
    --out results/h200/fa3.svg
fi
# Runs on an H100 lent for the H200 (results/h100/*/README.md): the newest
# fa3_wgmma judgement and version timing, and the backward against torch's,
# each from one device call and compared with nothing measured on the H200.
h100_section() {
  local fa3 bwd versions
  # The newest version's judgement: a fa3-vN-<commit> folder with torch's report, by version.
  fa3=$(ls -d results/h100/fa3-v[0-9]*-*/torch-sdpa-forward.json{,.gz} 2>/dev/null | sort -V |
    tail -n 1 | xargs -r dirname)
  # The newest judgement on issue 19's axes (backward-<commit> with our sweep
  # and torch's report) by its commit's date.
  bwd=$(for dir in results/h100/backward-*; do
          [[ -e $dir/torch-sdpa-backward.json && ( -e $dir/sweep-fa2-bwd.json ||
             -e $dir/sweep-fa2-bwd.json.gz ) ]] || continue
          echo "$(git log -1 --format=%ct "${dir##*-}" 2>/dev/null || echo 0) $dir"
        done | sort -n | tail -n 1 | cut -d' ' -f2)
  if [[ -n $fa3 ]]; then
    pair_section "fa3_wgmma vs torch SDPA cuDNN, issue 22's axes ($fa3/)" \
      "$fa3/torch-sdpa-forward.json" "$fa3/sweep-fa3.json" torch_sdpa_cudnn=fa3_wgmma
    pair_section "fa3_wgmma vs fa2_mma, the same run ($fa3/sweep-fa3.json)" \
      "$fa3/sweep-fa3.json" "$fa3/sweep-fa3.json" fa2_mma=fa3_wgmma
    versions=$fa3/versions/v7.1-br192-v8
    pair_section "fa3_wgmma v8 vs v7.1 at d 64, in turn in one call ($versions/)" \
      "$versions/issue-v7.1-round2.json" "$versions/issue-v8-round2.json" fa3_wgmma=fa3_wgmma \
      "ratio = v8 ÷ v7.1 median time; round 2 of 2; v7.1's tool was a build with uncommitted changes (its README)"
  fi
  if [[ -n $bwd ]]; then
    local kernel
    for kernel in fa3_bwd fa2_bwd_2d fa2_bwd; do
      pair_section "$kernel vs torch SDPA flash backward, issue 19's axes ($bwd/)" \
        "$bwd/torch-sdpa-backward.json" "$bwd/sweep-fa2-bwd.json" "torch_sdpa_flash=$kernel"
    done
    pair_section "fa3_bwd vs torch SDPA cuDNN backward, issue 19's axes ($bwd/)" \
      "$bwd/torch-sdpa-backward.json" "$bwd/sweep-fa2-bwd.json" "torch_sdpa_cudnn=fa3_bwd"
    "$tool" plot "$bwd/sweep-fa2-bwd.json" "$bwd/torch-sdpa-backward.json" \
      --title "H100: the backward kernels and torch SDPA's backward" --out "$bwd/backward.svg" >&2
    echo
    echo "![the backward kernels and torch SDPA's backward on an H100]($bwd/backward.svg)"
  fi
}
h100_generated=$(h100_section)
GENERATED=$h100_generated python3 results/splice_generated.py README.md \
  '<!-- h100:begin (generated by results/update-readme.sh; do not edit) -->' '<!-- h100:end -->'
echo "README.md: H100 section regenerated"

begin='<!-- results:begin (generated by results/update-readme.sh; do not edit) -->'
end='<!-- results:end -->'
GENERATED=$generated python3 results/splice_generated.py README.md "$begin" "$end"
echo "README.md: results tables regenerated"
energy_generated=$(energy_section)
GENERATED=$energy_generated python3 results/splice_generated.py README.md \
  '<!-- energy:begin (generated by results/update-readme.sh; do not edit) -->' '<!-- energy:end -->'
echo "README.md: energy section regenerated"

# The chart: the profiled reports where the device run wrote them (their rows
# carry measured DRAM and L2 points), else the sweeps.
shopt -s nullglob
plotted=()
for file in results/h200/profile/*.json results/h200/profile/*.json.gz; do plotted+=("${file%.gz}"); done
mapfile -t plotted < <(printf '%s\n' "${plotted[@]}" | sort -u | grep .)
[[ ${#plotted[@]} -gt 0 ]] || plotted=(results/h200/sweep-causal.json results/h200/sweep-noncausal.json)
"$tool" plot "${plotted[@]}" --ceilings results/h200/ceilings.json --out results/h200/roofline.svg
echo "results/h200/roofline.svg: redrawn from ${plotted[*]}"

# The HTML page of the two sweeps (docs/html-report.md), and the screenshot of
# its top the README shows, where Chromium is installed.
"$tool" report results/h200/sweep-causal.json results/h200/sweep-noncausal.json \
  results/h200/ceilings.json --html results/h200/report.html
if command -v chromium >/dev/null 2>&1; then
  profile=$(mktemp -d)
  chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --user-data-dir="$profile" \
    --window-size=1280,1000 --screenshot="$PWD/results/h200/report.png" \
    "file://$PWD/results/h200/report.html" >/dev/null 2>&1
  rm -rf "$profile"
  echo "results/h200/report.html and report.png: made from the two sweeps"
else
  echo "results/h200/report.html: made from the two sweeps (no chromium: report.png kept)"
fi

# The memory-bound half: the served rows, ours and the peers', under the
# read-stream and copy slopes of the measured ceilings.
served=()
for folder in results/h200/served results/h200/peers/served; do
  # Each report by its .json name (the tool reads FILE from FILE.gz), in the
  # order the folder's glob gives it.
  mapfile -t reports < <(for report in "$folder"/*.json "$folder"/*.json.gz; do
    echo "${report%.gz}"; done | sort -u)
  for report in "${reports[@]}"; do
    [[ $report == *.samples.json ]] || served+=("$report")  # the peers' raw samples are no report
  done
done
if [[ ${#served[@]} -gt 0 ]]; then
  "$tool" plot "${served[@]}" --ceilings results/h200/ceilings.json \
    --title "H200: decode, GQA, speculative and paged attention" --out results/h200/served.svg
  echo "results/h200/served.svg: drawn from ${served[*]}"
fi
