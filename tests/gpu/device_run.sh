#!/usr/bin/env bash
# Runs on a machine with a CUDA GPU, from the repository root, over a build
# made elsewhere (CFR_BUILD_DIR, default build-h200). Steps, in order, as
# arguments: tests, sanitizer, sanitizer_served, smoke, devices, cli, results,
# ceilings, cublas, fa2variants, fa2order, ncuprobe, l2data, fa2prof, torchquick,
# peers_fixture, peers_sweep, peers_served, peer_compare, plugins, plugin_bytes, profile,
# profile_fa2big, profile_big, served, served_mha, peers_served_mha, served_profile, energy,
# flush_modes, ceilings_energy, limiter, scaled_checks, cold_timer, timing_check, replay_modes,
# profile_misses, fa2bwd,
# peers_backward, fa2bwd_variants, fa3, fa3_rows, peers_fa3, peers_fa3_other, profile_fa3,
# fa3_gap, decode_offsets, served_paged, l2_loop, bwd_source,
# fa2bwd_vs_flash, fa2bwd_clocks, peers_backward_ragged, bwd_ab.
# Logs go to $OUT (or
# /tmp/cfr-out) so a lent machine sends them back.
set -uo pipefail
build=${CFR_BUILD_DIR:-build-h200}
out=${OUT:-/tmp/cfr-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
tool=$build/app/cuflash-roofline
status=0

# The test binaries with GPU cases: the others run on CI and bake this
# machine's absolute paths (the tool, python3, the source tree) in.
step_tests() {
  for binary in "$build"/tests/kernels/test_kernels "$build"/tests/*/test_*gpu*; do
    [[ -x $binary && -f $binary ]] || continue
    echo "== $binary"
    # A kernel that hangs is killed, and the steps after this one still run.
    timeout -s KILL "${CFR_TEST_TIMEOUT:-420}" "$binary" 2>&1 | tail -n 40 |
      tee -a "$out/tests.log" || status=1
  done
}

# Memcheck and racecheck over every kernel on small shapes, ragged N included:
# every head dim and dtype, since each is its own instantiation (fa2_mma's
# d = 64 computes its exponentials first, bf16 packs P with other instructions).
step_sanitizer() {
  local args=(sweep --gpu h200 --seq-lens 17,130 --head-dims 32,64,128 --both --dtype fp16,bf16,fp32
              --backward --warmup 0 --min-samples 1 --max-seconds 0.01 --hot)
  sanitize sanitizer "" "${args[@]}"
}

# Memcheck then racecheck over one sweep: logs $out/PREFIX-<tool>.log; a
# finding or a failed row fails the run. SANITIZE_TOOLS narrows the tools
# (a step whose racecheck takes fewer rows calls it once a tool).
sanitize() {
  local prefix=$1 label=$2
  shift 2
  for tool_name in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    echo "== compute-sanitizer --tool $tool_name$label"
    compute-sanitizer --tool "$tool_name" --error-exitcode 9 "$tool" "$@" \
      >"$out/$prefix-$tool_name.log" 2>&1
    local rc=$?
    tail -n 5 "$out/$prefix-$tool_name.log"
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
  # The flag `ceilings` set must survive audit's re-derivation (same function).
  "$tool" audit results/h200/ceilings.json 2>&1 | tail -n 5
  cp results/h200/ceilings.json "$out/"
}

# cuBLAS, opened at its first use (kernels/measure/cublas_library.hpp): the
# naive rows open it and pass (exit 0, audit clean), also under --profile,
# ceilings measures its two cuBLAS tensor peaks (exit 0); with an empty file named
# libcublas.so.13 first on the library path, the naive rows fail naming it
# and the fa2_mma rows still run (exit 1).
step_cublas() {
  local args=(sweep --kernels naive,fa2_mma --seq-lens 1024,4096 --head-dims 64 --causal
              --max-seconds 0.2)
  "$tool" "${args[@]}" --json "$out/cublas-naive.json" >"$out/cublas-naive.log" 2>&1
  local rc=$?
  "$tool" audit "$out/cublas-naive.json" >/dev/null 2>&1
  local audit_rc=$?
  echo "naive + fa2_mma sweep: exit $rc, audit exit $audit_rc (0 and 0 expected)"
  [[ $rc -eq 0 && $audit_rc -eq 0 ]] || status=1
  "$tool" ceilings --json "$out/cublas-ceilings.json" >"$out/cublas-ceilings.log" 2>&1
  rc=$?
  local figures
  figures=$(grep -c '"figure": "[a-z0-9]*_tensor_cublas"' "$out/cublas-ceilings.json")
  echo "ceilings: exit $rc, $figures cuBLAS figures (0 and 2 expected)"
  [[ $rc -eq 0 && $figures -eq 2 ]] || status=1
  # profile-child (under ncu) makes a handle only for the naive rows.
  "$tool" "${args[@]}" --profile --json "$out/cublas-profile.json" >"$out/cublas-profile.log" 2>&1
  rc=$?
  "$tool" audit "$out/cublas-profile.json" >/dev/null 2>&1
  audit_rc=$?
  echo "the same sweep with --profile: exit $rc, audit exit $audit_rc (0 and 0 expected)"
  [[ $rc -eq 0 && $audit_rc -eq 0 ]] || status=1
  local broken=/tmp/cfr-broken-cublas
  mkdir -p "$broken" && : >"$broken/libcublas.so.13"
  LD_LIBRARY_PATH=$broken:$LD_LIBRARY_PATH "$tool" "${args[@]}" --json "$out/cublas-broken.json" \
    >"$out/cublas-broken.log" 2>&1
  rc=$?
  local ok
  ok=$(grep -c '"status": "ok"' "$out/cublas-broken.json")
  echo "with a broken libcublas.so.13: exit $rc, $ok rows ok (1 and 2 expected: fa2_mma's)"
  grep -m 1 -o '"reason": "cuBLAS: cannot open[^"]*"' "$out/cublas-broken.json" || status=1
  [[ $rc -eq 1 && $ok -eq 2 ]] || status=1
}

# fa2_mma tile variants: checked against the reference, then timed (cold).
# fa2_bwd's tuning knobs (fa2_bwd::BwdTuning) checked and timed side by side;
# pack the build with `tests/gpu/pack_build.sh build-h200 fa2bwd_variants`.
step_fa2bwd_variants() {
  "$build/tests/gpu/fa2bwd_variants" "${CFR_FA2BWD_FILTER:-}" 2>&1 | tee "$out/fa2bwd-variants.txt" |
    grep -v '^ ' | tail -n 120
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
}
# fa3_wgmma's Q block heights at d 64 against its rule's pick (catalog revision
# 8): tests/gpu/fa3_rows checks both heights, then times 128 rows, 192 rows and
# the pick on 12 shapes, both masks (pack with `pack_build.sh build-h200 fa3_rows`).
step_fa3_rows() {
  mkdir -p results/h200/fa3
  "$build/tests/gpu/fa3_rows" 2>&1 | tee results/h200/fa3/fa3-rows.txt | cut -c1-110 | tail -n 30
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
}
# fa2_decode's split counts on contiguous and paged caches (issue 25's paged
# target: does a paged cache need the plan's second CTA an SM?): the served
# tests check the registered kernel (whose config decode_dev --splits times)
# at every split count the plan gives, then each shape's counts are timed in
# turn (pack with `pack_build.sh build-h200 decode_dev`).
# decode_dev --splits [VARIANT...] into results/h200/decode-dev/FILE: each
# named variant checked, then every split count on contiguous and paged
# caches, in turn (no names: the registered tile's twin, unchecked).
# usage: decode_splits FILE [VARIANT...]
decode_splits() {
  local file=$1
  shift
  mkdir -p results/h200/decode-dev
  "$build/tests/gpu/decode_dev" --splits "$@" 2>&1 | tee "results/h200/decode-dev/$file"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
}
step_decode_splits() {
  "$build/tests/kernels/test_kernels" "[served]" 2>&1 | tail -n 3
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  decode_splits splits.txt
}
# Issue 25's paged target, rounds 12-13 (docs/perf-notes.md): the registered
# tile's twin beside the split's page indices in shared memory (t2k), one page
# lookup per 16 rows (p16) and both.
step_decode_paged() {
  decode_splits round13-paged.txt d128_w4r1_bc64_s3 d128_w4r1_bc64_s3_t2k d128_w4r1_bc64_s3_p16 \
    d128_w4r1_bc64_s3_t2k_p16
}
# Issue 25's paged target, round 14 (docs/perf-notes.md): the registered
# tile's twin and the shared table, each beside its 32-bit paged offsets (o32).
step_decode_offsets() {
  decode_splits round14-offsets.txt d128_w4r1_bc64_s3 d128_w4r1_bc64_s3_o32 \
    d128_w4r1_bc64_s3_t2k d128_w4r1_bc64_s3_t2k_o32
}
step_fa2variants() {
  "$build/tests/gpu/fa2_variants" "${CFR_FA2_FILTER:-}" 2>&1 | tee "$out/fa2-variants.txt" | tail -n 60
}

# Nsight Compute facts the --profile design rests on: the version, the metric
# names this chip has, what --nvtx-include / --print-nvtx-rename do with the
# ranges a profiled run pushes, a raw CSV of real kernels (a parser fixture),
# and DRAM / L2 bytes of fa2_mma at shapes around the L2 size.
step_ncuprobe() {
  local log=$out/ncu-probe.txt probe=$build/tests/gpu/ncu_nvtx_probe
  ncu --version >"$log" 2>&1
  ncu --query-metrics --chip gh100 >"$out/ncu-metrics-gh100.txt" 2>&1
  local basic=gpu__time_duration.sum,launch__grid_size
  local -a filters=(
    "--nvtx --nvtx-include cfr_profile/"
    "--nvtx --nvtx-include cfr_profile/ --print-nvtx-rename kernel"
    "--nvtx --nvtx-include regex:row.*/ --print-nvtx-rename kernel"
    "--nvtx --nvtx-include cfr_profile/*/ --print-nvtx-rename kernel"
    "--nvtx --nvtx-include cfr_profile/row_7/"
  )
  for filter in "${filters[@]}"; do
    echo "== ncu --csv --page raw $filter" >>"$log"
    # shellcheck disable=SC2086
    ncu --csv --page raw --metrics "$basic" $filter "$probe" >>"$log" 2>&1
  done
  echo "== details page with --nvtx" >>"$log"
  ncu --nvtx --nvtx-include cfr_profile/ --metrics "$basic" --print-details all "$probe" >>"$log" 2>&1
  local -a wanted=(dram__bytes_read.sum dram__bytes_write.sum lts__t_bytes.sum
    lts__t_sectors_srcunit_tex.sum lts__t_sector_hit_rate.pct
    l1tex__data_pipe_lsu_wavefronts_mem_shared.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
    smsp__inst_executed_op_ldsm.sum sm__inst_executed_pipe_tensor_op_hmma.sum
    sm__inst_executed_pipe_tensor_op_gmma.sum sm__ops_path_tensor_src_fp16_dst_fp32.sum
    sm__ops_path_tensor_src_bf16_dst_fp32.sum sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum
    smsp__sass_thread_inst_executed_op_ffma_pred_on.sum smsp__sass_thread_inst_executed_op_fadd_pred_on.sum
    smsp__sass_thread_inst_executed_op_fmul_pred_on.sum gpu__time_duration.sum
    sm__cycles_elapsed.avg.per_second dram__cycles_elapsed.avg.per_second
    sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
    sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
    sm__throughput.avg.pct_of_peak_sustained_elapsed launch__registers_per_thread
    launch__occupancy_limit_registers sm__warps_active.avg.pct_of_peak_sustained_active)
  local present=()
  for metric in "${wanted[@]}"; do
    if grep -q "^${metric%.*}[[:space:]]" "$out/ncu-metrics-gh100.txt"; then present+=("$metric"); fi
  done
  local list
  list=$(IFS=,; echo "${present[*]}")
  echo "== metrics present: $list" >>"$log"
  ncu --csv --page raw --print-units base --clock-control none --cache-control all --metrics "$list" \
    "$tool" sweep --gpu h200 --kernels naive,fa1_scalar,fa1_wmma --seq-lens 300 --head-dims 64 \
    --no-causal --warmup 0 --min-samples 1 --max-seconds 0.01 --hot \
    >"$out/ncu-fixture-sweep.csv" 2>&1
  echo "== fixture exit $?" >>"$log"
  local fa2=$build/tests/gpu/fa2_variants bytes=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum
  for spec in "d128_bc64_w4x2 8 16384" "d128_bc64_w4x2 32 32768" "d64_bc128_w4x2 32 65536" "d128_bc64_w4x2 128 32768"; do
    for causal in 0 1; do
      read -r name heads seq_len <<<"$spec"
      echo "== fa2 $name H=$heads N=$seq_len causal=$causal" >>"$log"
      ncu --csv --page raw --print-units base --clock-control none --metrics "$bytes" \
        --kernel-name regex:fa2_mma "$fa2" --once "$name" "$heads" "$seq_len" "$causal" >>"$log" 2>&1
    done
  done
  tail -n 30 "$log"
}

# Counters for the L2-aware DRAM model (issue 10): one ncu process over
# tests/gpu/single_launch, every kernel at the default sweep's axes and at
# shapes whose K/V working set outgrows the L2; rows are told apart by the
# NVTX range each configuration's launches run in.
l2data_metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_ltcfabric.sum
l2data_metrics+=,lts__t_sectors_lookup_miss.sum,gpu__time_duration.sum,sm__ops_path_tensor_src_fp16.sum
l2data_metrics+=,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__inst_executed_pipe_tensor_op_hmma.sum
l2data_metrics+=,sm__inst_executed_pipe_tensor_op_gmma.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
l2data_metrics+=,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__cycles_elapsed.avg.per_second
step_l2data() {
  local configs=()
  for kernel in naive fa1_scalar fa1_wmma fa2_mma fa1_bwd; do
    for head_dim in 64 128; do
      for seq_len in 1024 2048 4096 8192 16384; do
        for causal in 0 1; do configs+=("$kernel:fp16:1:8:$seq_len:$head_dim:$causal"); done
      done
    done
  done
  for causal in 0 1; do
    configs+=("fa2_mma:fp16:1:32:32768:128:$causal" "fa2_mma:fp16:1:8:65536:128:$causal"
      "fa2_mma:fp16:1:4:131072:128:$causal" "fa2_mma:fp16:1:16:131072:64:$causal"
      "fa2_mma:bf16:1:32:32768:128:$causal" "fa1_wmma:fp16:1:32:32768:128:$causal"
      "fa1_wmma:fp16:1:8:65536:128:$causal" "fa1_scalar:fp16:1:32:32768:128:$causal"
      "naive:fp16:1:32:8192:128:$causal" "fa1_bwd:fp16:1:8:32768:128:$causal")
  done
  printf '%s\n' "${configs[@]}" >"$out/l2data-configs.txt"
  ncu --csv --page raw --print-units base --clock-control none --cache-control all \
    --nvtx --nvtx-include cfr_profile/ --metrics "$l2data_metrics" \
    "$build/tests/gpu/single_launch" "${configs[@]}" >"$out/l2data.csv" 2>"$out/l2data.log"
  echo "l2data: exit $?, $(grep -c cfr_row "$out/l2data.csv") profiled launches"
  tail -n 3 "$out/l2data.log"
}

# DRAM and L2 bytes of fa2_mma's two launch orders (q blocks on x against heads
# on x), one launch each, at shapes whose K/V fit and outgrow the 60 MB L2.
step_fa2order() {
  local fa2=$build/tests/gpu/fa2_variants
  local m=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum
  for shape in "8 8192" "8 16384" "32 32768"; do
    for causal in 0 1; do
      for name in order_q_d128 order_h_d128 order_q_d64 order_h_d64; do
        echo "== $name H,N=$shape causal=$causal"
        # shellcheck disable=SC2086
        ncu --csv --page raw --print-units base --clock-control none --cache-control all \
          --metrics "$m" --kernel-name regex:fa2_mma "$fa2" --once "$name" $shape "$causal" 2>&1 |
          grep -v '^==PROF=='
      done
    done
  done | tee "$out/fa2-order-ncu.txt"
}

# Where fa2_mma d = 128 spends its time: the full Nsight Compute set on one
# launch (B 1, H 8, N 16384, non-causal), and the SASS of every variant.
step_fa2prof() {
  local fa2=$build/tests/gpu/fa2_variants
  ncu --set full --import-source no --clock-control none --kernel-name regex:fa2_mma \
    --export "$out/fa2-d128" "$fa2" --once d128_bc64_w4x2 8 16384 0 >"$out/fa2prof.log" 2>&1
  ncu --import "$out/fa2-d128.ncu-rep" --page details --print-units base >"$out/fa2-d128-details.txt" 2>&1
  cuobjdump --dump-sass "$fa2" 2>/dev/null | gzip >"$out/fa2-variants-sass.txt.gz"
  grep -E "Duration|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Bank Conflicts" \
    "$out/fa2-d128-details.txt" | head -n 20
}

# Shared-memory bank conflicts of fa2_mma (issue 9: "no bank conflicts: show
# the ncu counter"), one launch of each registered head dim's variant.
step_fa2banks() {
  local fa2=$build/tests/gpu/fa2_variants
  local m=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  m+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_ldsm.sum,gpu__time_duration.sum
  for name in ${CFR_FA2_BANKS:-d32_bc128_w4x2 d64_bc64_w4x2 d128_bc64_w4x2}; do
    echo "== $name"
    ncu --csv --page raw --print-units base --clock-control none --metrics "$m" \
      --kernel-name regex:fa2_mma "$fa2" --once "$name" 8 4096 0 2>&1 | tail -n 1
  done | tee "$out/fa2-banks.txt"
}

# Reference timings of torch SDPA backends for the fa2_mma work (a scratch
# script outside the tree; the committed comparison is peers/torch_sdpa.py).
step_torchquick() {
  python3 .device-build/torch_quick.py 2>&1 | tee "$out/torch-quick.txt" | tail -n 40
}

# torch's SDPA backends as peers (peers/torch_sdpa.py, python3 with torch). The
# build's tree stamp names the commit, since the tree travels without .git; the
# build's tool plans the problems and computes the report (import-samples).
peer_script() {
  PYTHONUNBUFFERED=1 python3 peers/torch_sdpa.py --tree-stamp "$build/peers/tree_stamp.json" \
    --tool "$tool" "$@"
}

# The small report the CPU tests read: copy $out/torch_sdpa_small.json to
# tests/peers/fixtures/torch_sdpa_small.json (fixtures/README.md).
step_peers_fixture() {
  python3 -c 'import torch; print("torch", torch.__version__, "cudnn",
    torch.backends.cudnn.version(), torch.cuda.get_device_name(0))'
  peer_script --seq-lens 256,1000 --head-dims 64 --dtype fp16 --both --max-seconds 0.05 \
    --json "$out/torch_sdpa_small.json" 2>"$out/torch_sdpa_small.log"
  local rc=$?
  tail -n 3 "$out/torch_sdpa_small.log"
  echo "peers fixture: exit $rc"
  [[ $rc -le 1 ]] || status=1  # 1: a row failed, which the report records
  "$tool" audit "$out/torch_sdpa_small.json" | tail -n 2 || status=1
  "$tool" table "$out/torch_sdpa_small.json" \
    --columns "kernel,N,causal,median ms,TFLOPS,check,status"
}

# One peer report, $out/NAME.json, with its log, its audit and its Markdown
# table beside it; the arguments go to the script.
peer_report() {
  local name=$1
  shift
  peer_script "$@" --json "$out/$name.json" 2>"$out/$name.log"
  local rc=$?
  tail -n 3 "$out/$name.log"
  echo "peers $name: exit $rc"
  [[ $rc -le 1 ]] || status=1  # 1: a row failed, which the report records
  "$tool" audit "$out/$name.json" | tail -n 2 || status=1
  "$tool" table "$out/$name.json" --format md >"$out/$name.md"
  "$tool" table "$out/$name.json" \
    --columns "kernel,dtype,B,H,Hkv,N,Nk,page,d,causal,median ms,GB/s,% BW,TFLOPS,% roof,status"
}

# The peers on the axes of our comparison: B 1, H 8, N 1024..16384, d 64 and
# 128, fp16 and bf16, causal and not, every backend, the default timing flags.
step_peers_sweep() {
  peer_report torch_sdpa_sweep --batch 1 --heads 8 --seq-lens 1024:16384:x2 --head-dims 64,128 \
    --dtype fp16,bf16 --both
}

# The peers on issue 25's served shapes (docs/model.md section 7), one report
# each, on the axes of step_served (so `compare --by shape` pairs every row of
# ours with theirs) and the issue's: decoding steps of Llama 3 8B (32 query
# heads over 8 K/V heads, d 128) against 2K..128K keys, B 1 to 128; Llama 2
# 7B's MHA; 4 and 16 speculative tokens (the bottom-right mask); paged caches
# (every row skipped, no GPU time: torch SDPA reads a contiguous K/V cache);
# GQA prefill, causal and not. 0.5 s a row, a few minutes in all.
# The peers on step_served_mha's axes.
step_peers_served_mha() {
  local time=(--max-seconds 0.5)
  peer_report torch_sdpa_decode_mha --preset llama2-7b --dtype fp16,bf16 --kv-lens 2048:131072:x4 \
    --batch 1,8,32 "${time[@]}"
  peer_report torch_sdpa_decode_mha_batch --preset llama2-7b --dtype fp16,bf16 \
    --kv-lens 2048,8192,32768 --batch 128 "${time[@]}"
}
step_peers_served() {
  local time=(--max-seconds 0.5)
  peer_report torch_sdpa_decode --preset llama3-8b --dtype fp16,bf16 --kv-lens 2048:131072:x4 \
    --batch 1,8,32 "${time[@]}"
  peer_report torch_sdpa_decode_batch --preset llama3-8b --dtype fp16,bf16 \
    --kv-lens 2048,8192,32768 --batch 128 "${time[@]}"
  step_peers_served_mha
  peer_report torch_sdpa_speculative --preset llama3-8b --dtype fp16,bf16 --q-lens 4,16 \
    --kv-lens 32768 --batch 8 --causal "${time[@]}"
  peer_report torch_sdpa_paged --preset llama3-8b --dtype fp16 --kv-lens 32768,131072 --batch 1,8 \
    --page-size 16,256 "${time[@]}"
  peer_report torch_sdpa_gqa_prefill --heads 32 --kv-heads 8 --head-dims 128 --dtype fp16,bf16 \
    --seq-lens 4096,8192,16384 --both "${time[@]}"
}

# Issue 9's judgement in one run: our tensor-core kernels and torch's SDPA
# backends on the same axes and timing flags, then fa2_mma ÷ flash per shape.
step_peer_compare() {
  local axes=(--batch 1 --heads 8 --seq-lens 1024:16384:x2 --head-dims 64,128 --dtype fp16,bf16
              --both --max-seconds 1)
  "$tool" sweep "${axes[@]}" --kernels fa2_mma,fa1_wmma --json "$out/sweep-peer-axes.json" \
    --md "$out/sweep-peer-axes.md" 2>"$out/sweep-peer-axes.log" | tail -n 3
  peer_script "${axes[@]}" --json "$out/torch-sdpa.json" 2>"$out/torch-sdpa.log"
  echo "peers: exit $?"
  for report in sweep-peer-axes torch-sdpa; do
    "$tool" audit "$out/$report.json" | tail -n 1 || status=1
  done
  "$tool" compare "$out/torch-sdpa.json" "$out/sweep-peer-axes.json" \
    --match-kernel torch_sdpa_flash=fa2_mma >"$out/fa2-vs-flash.txt" 2>&1
  grep -E "FASTER|SLOWER|SAME" "$out/fa2-vs-flash.txt" | head -n 50
}

# Plugin kernels (docs/plugins.md): the GPU tests of plugins (the example's
# kernel measured and checked, a wrong softmax scale failed by the check, a
# launch error failing only its row), the walk-through's sweep kept as
# results/h200/plugin-example.* and audited, and a sweep on whose rows a
# plugin launch fails while the next kernel's rows still run.
step_plugins() {
  local example=$build/kernels/plugin/example/libcfr_example_plugin.so
  local tiny=$build/tests/kernels/plugins/libcfr_test_plugin_tiny.so
  "$build/tests/kernels/test_bench_gpu" "[plugin]" 2>&1 | tail -n 20 | tee "$out/plugins-tests.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  mkdir -p results/h200
  "$tool" sweep --plugin "$example" --kernels example_simt,fa1_scalar --seq-lens 1024:8192:x2 \
    --head-dims 64,128 --both --json results/h200/plugin-example.json \
    --md results/h200/plugin-example.md 2>"$out/plugin-example.log" | tail -n 40
  echo "plugin sweep: exit ${PIPESTATUS[0]}"
  "$tool" audit results/h200/plugin-example.json | tail -n 3
  local rc=${PIPESTATUS[0]}
  echo "plugin audit: exit $rc"
  [[ $rc -eq 0 ]] || status=1
  cp results/h200/plugin-example.json results/h200/plugin-example.md "$out/"
  cp "$out/plugin-example.log" results/h200/plugin-example.log
  "$tool" sweep --plugin "$tiny" --plugin "$example" --kernels tiny_fwd,example_simt \
    --seq-lens 1024 --json "$out/plugin-launch-error.json" >"$out/plugin-launch-error.log" 2>&1
  rc=$?
  echo "launch-error sweep: exit $rc (1 expected: tiny_fwd's rows fail, example_simt's run)"
  grep -E "failed|median" "$out/plugin-launch-error.log" | head -n 4
  [[ $rc -eq 1 ]] || status=1
}

# A plugin kernel that counts its own HBM bytes (ABI version 2, traffic model
# "plugin", docs/plugins.md): example_own_bytes is example_simt's kernel with
# an hbm_bytes callback, so beside example_simt (kv_reload, tile 64x32) its
# rows must pass the correctness check, carry the same traffic.bytes, and
# time like it. Kept as results/h200/plugins/plugin-own-bytes.*; audited
# without the plugin (its count taken as recorded, a note) and with it
# (counted again); both must exit 0.
step_plugin_bytes() {
  local example=$build/kernels/plugin/example/libcfr_example_plugin.so
  local bytes=$build/kernels/plugin/example/libcfr_example_bytes_plugin.so
  local report=results/h200/plugins/plugin-own-bytes
  mkdir -p results/h200/plugins
  "$tool" sweep --plugin "$example" --plugin "$bytes" --kernels example_simt,example_own_bytes \
    --seq-lens 1024:4096:x2 --head-dims 64,128 --both --json "$report.json" --md "$report.md" \
    2>"$report.log" | tail -n 30
  local rc=${PIPESTATUS[0]}
  echo "own-bytes sweep: exit $rc"
  [[ $rc -eq 0 ]] || status=1
  "$tool" audit "$report.json" | tail -n 3
  rc=${PIPESTATUS[0]}
  echo "own-bytes audit without the plugin: exit $rc"
  [[ $rc -eq 0 ]] || status=1
  "$tool" audit --plugin "$bytes" "$report.json" | tail -n 3
  rc=${PIPESTATUS[0]}
  echo "own-bytes audit --plugin: exit $rc"
  [[ $rc -eq 0 ]] || status=1
  cp "$report.json" "$report.md" "$report.log" "$out/"
}

# sweep --profile (issue 10): every row timed, then profiled by one ncu
# process, against the committed measured ceilings (they carry the L2
# bandwidth the L2 roof needs). Reports go to results/h200/profile/ and $OUT,
# audits to $OUT. Two steps, each well inside a 10-minute command:
#  - profile: the default axes (5 kernels, d 64 and 128, N 1024..16384, both
#    masks, 100 rows) at a 0.5 s time cap (the default 2 s took ~2.5 min per
#    mask; the session's device time is short): ~2 min of timing, 2-3 of ncu;
#  - profile_big: shapes whose K/V (or S) outgrow the 60 MiB L2, chosen from
#    the l2data rows, at most 3 samples and 3 s each: about 2-3 min.
#    H 32, N 32768, d 128 (the issue's shape): 16 MiB of K/V per head, 512 MiB
#    in all, one or two heads' worth running at once against the 30 MiB a
#    partition sees; fa2_mma H 4, N 131072, d 128: one head's K/V (64 MiB)
#    alone exceeds the L2; naive H 32, N 8192, d 128: S of one head is
#    128 MiB; fa1_bwd H 8, N 32768, d 128: its dK/dV pass streams 16 MiB of
#    Q and dO per head.
profile_sweep() {
  local name=$1
  shift
  "$tool" sweep --profile --ceiling "${PROFILE_CEILING:-results/h200/ceilings.json}" \
    --json "results/h200/profile/$name.json" "$@" >"$out/profile-$name.txt" 2>"$out/profile-$name.log"
  local rc=$?
  echo "profile $name: sweep exit $rc; $(grep '^profile:' "$out/profile-$name.log" | tail -n 1)"
  "$tool" audit "results/h200/profile/$name.json" >"$out/profile-$name.audit.txt"
  local audit_rc=$?
  echo "audit $name: exit $audit_rc; $(tail -n 1 "$out/profile-$name.audit.txt")"
  [[ $rc -eq 0 && $audit_rc -eq 0 ]] || status=1
  cp "results/h200/profile/$name.json" "$out/"
}
step_profile() {
  mkdir -p results/h200/profile
  profile_sweep default --both --head-dims 64,128 --backward --max-seconds 0.5
}
# The shapes whose K/V outgrow the L2, fa2_mma's among them (the part of
# profile_big a change to fa2_mma's launch invalidates).
step_profile_fa2big() {
  mkdir -p results/h200/profile
  local big=(--head-dims 128 --both --warmup 1 --min-samples 3 --max-seconds 3)
  profile_sweep h32-n32k --kernels fa2_mma,fa1_wmma,fa1_scalar --heads 32 --seq-lens 32768 "${big[@]}"
  profile_sweep fa2-h4-n128k --kernels fa2_mma --heads 4 --seq-lens 131072 "${big[@]}"
}
# fa3_wgmma's launch order (v5: heads side by side in groups sized by the
# L2): issue 22's N 16K rows with fa2_mma beside them, and B4 H16 N8K d128,
# where a group is 2 of 64 heads and their K/V (256 MiB) outgrow the L2.
step_profile_fa3() {
  mkdir -p results/h200/profile
  profile_sweep fa3-n16k --kernels fa3_wgmma,fa2_mma --heads 8 --seq-lens 16384 --head-dims 64,128 \
    --both --max-seconds 0.5
  profile_sweep fa3-groups --kernels fa3_wgmma --batch 4 --heads 16 --seq-lens 8192 --head-dims 128 \
    --both --warmup 1 --min-samples 3 --max-seconds 1
}
step_profile_big() {
  step_profile_fa2big
  local big=(--head-dims 128 --both --warmup 1 --min-samples 3 --max-seconds 3)
  profile_sweep naive-h32-n8k --kernels naive --heads 32 --seq-lens 8192 "${big[@]}"
  profile_sweep bwd-h8-n32k --kernels fa1_bwd --heads 8 --seq-lens 32768 "${big[@]}"
}

# The shapes attention is served in (issue 25): our sweeps of decode (Llama 3
# 8B's 32/8 heads and 32/32 MHA), speculative decoding, paged caches and GQA
# prefill, each audited. results/h200/served/.
served_sweep() {
  local name=$1
  shift
  mkdir -p results/h200/served
  "$tool" sweep --ceiling results/h200/ceilings.json --json "results/h200/served/$name.json" \
    --md "results/h200/served/$name.md" "$@" >"$out/served-$name.txt" 2>"$out/served-$name.log"
  local rc=$?
  "$tool" audit "results/h200/served/$name.json" >"$out/served-$name.audit.txt"
  local audit_rc=$?
  echo "served $name: sweep exit $rc, audit exit $audit_rc; $(tail -n 1 "$out/served-$name.log")"
  [[ $rc -eq 0 && $audit_rc -eq 0 ]] || status=1
  cp "results/h200/served/$name.json" "results/h200/served/$name.md" "$out/" 2>/dev/null
}
# Llama 2 7B's MHA decoding (32 K/V heads): B 1 to 128, Nk 2K to 128K, fp16
# and bf16, but B 128 at Nk 128K (275 GB of K/V).
step_served_mha() {
  local time=(--max-seconds 0.5)
  served_sweep decode-mha --preset llama2-7b --dtype fp16,bf16 --kv-lens 2048:131072:x4 \
    --batch 1,8,32 --kernels fa2_decode "${time[@]}"
  served_sweep decode-mha-batch --preset llama2-7b --dtype fp16,bf16 --kv-lens 2048,8192,32768 \
    --batch 128 --kernels fa2_decode "${time[@]}"
}
step_served() {
  local time=(--max-seconds 0.5)
  served_sweep decode --preset llama3-8b --dtype fp16,bf16 --kv-lens 2048:131072:x4 --batch 1,8 \
    --kernels fa2_decode "${time[@]}"
  served_sweep decode-batch --preset llama3-8b --dtype fp16,bf16 --kv-lens 2048,8192,32768 \
    --batch 32,128 --kernels fa2_decode "${time[@]}"
  step_served_mha
  served_sweep speculative --preset llama3-8b --dtype fp16,bf16 --q-lens 4,16 --kv-lens 32768 \
    --batch 8 --causal --kernels fa2_decode "${time[@]}"
  # The paged rows, and a shape the paged target does not name: 16
  # speculative tokens (64 rows a CTA) through the pages.
  step_served_paged
  served_sweep gqa-prefill --heads 32 --kv-heads 8 --head-dims 128 --dtype fp16,bf16 \
    --seq-lens 4096,8192,16384 --both --kernels fa2_mma "${time[@]}"
}
# Issue 25's paged target alone: the paged rows of step_served beside their
# contiguous twins, in one report each.
step_served_paged() {
  local time=(--max-seconds 0.5)
  served_sweep paged --preset llama3-8b --dtype fp16 --kv-lens 32768,131072 --batch 1,8 \
    --page-size 0,16,256 --kernels fa2_decode "${time[@]}"
  served_sweep paged-speculative --preset llama3-8b --dtype fp16 --q-lens 16 \
    --kv-lens 32768,131072 --batch 8 --page-size 0,16,256 --causal --kernels fa2_decode "${time[@]}"
}
# Nsight Compute on served rows whose K/V outgrow the L2: the DRAM model
# against the counters (results/h200/profile/served.json).
step_served_profile() {
  mkdir -p results/h200/profile
  profile_sweep served-decode --preset llama3-8b --kv-lens 32768,131072 --batch 1,8 \
    --page-size 0,16 --kernels fa2_decode --max-seconds 0.3
  profile_sweep served-prefill --heads 32 --kv-heads 8 --head-dims 128 --seq-lens 8192 --both \
    --kernels fa2_mma --max-seconds 0.3
  profile_sweep served-speculative --preset llama3-8b --q-lens 4,16 --kv-lens 32768 --batch 8 \
    --causal --kernels fa2_decode --max-seconds 0.3
}
# The decode rows under each way of flushing L2 (docs/perf-notes.md, "A flush
# that leaves no debt"), ours and torch's back to back, and ours hot.
step_flush_modes() {
  local dir=results/h200/served/flush-modes
  mkdir -p "$dir"
  local axes=(--preset llama3-8b --dtype fp16 --kv-lens 2048:131072:x4 --batch 1,8,32
              --max-seconds 0.5)
  local mode
  for mode in memset read hot; do
    local flush=(--l2-flush "$mode")
    [[ $mode == hot ]] && flush=(--hot)
    "$tool" sweep --ceiling results/h200/ceilings.json --kernels fa2_decode "${axes[@]}" \
      "${flush[@]}" --json "$dir/decode-$mode.json" --md "$dir/decode-$mode.md" \
      >"$out/flush-$mode.txt" 2>&1 || status=1
    "$tool" audit "$dir/decode-$mode.json" | tail -n 1
    [[ $mode == hot ]] && continue
    peer_script "${axes[@]}" "${flush[@]}" --json "$dir/torch-decode-$mode.json" \
      2>"$out/flush-peer-$mode.log"
    [[ $? -le 1 ]] || status=1
    "$tool" audit "$dir/torch-decode-$mode.json" | tail -n 1
    "$tool" table "$dir/torch-decode-$mode.json" --format md >"$dir/torch-decode-$mode.md"
  done
  cp -r "$dir" "$out/"
}

# Memcheck and racecheck over the served shapes' launches: fa2_decode's
# splits and their combine, pages, GQA and Nq != Nk in fa2_mma, ragged keys.
step_sanitizer_served() {
  local args=(sweep --gpu h200 --heads 8 --kv-heads 2 --q-lens 1,3,16 --kv-lens 17,300 --page-size 0,16
              --head-dims 64,128 --both --dtype fp16,bf16 --kernels fa2_decode,fa2_mma
              --warmup 0 --min-samples 1 --max-seconds 0.01 --hot)
  sanitize sanitizer-served " (served shapes)" "${args[@]}"
}

# The board's energy per row (sweep --energy, docs/energy.md): the GPU test
# that prints the counter's resolution and update period, a small sweep with
# its audit, and nvidia-smi's power reading logged every 100 ms during a run
# of one row, for the comparison docs/energy.md asks.
# The default sweep (every forward kernel, B 1 H 8 d 64, N 1K-16K) with
# --energy: the naive kernel's FLOP/J beside the fused ones (issue 20).
step_energy_default() {
  mkdir -p results/h200/energy
  "$tool" sweep --energy --max-seconds 0.5 --json results/h200/energy/sweep-default-energy.json \
    --md results/h200/energy/sweep-default-energy.md 2>"$out/sweep-default-energy.log" | tail -n 24
  local rc=${PIPESTATUS[0]}
  "$tool" audit results/h200/energy/sweep-default-energy.json 2>&1 | tail -n 2
  [[ $rc -eq 0 ]] || status=1
  cp results/h200/energy/sweep-default-energy.* "$out/"
}
step_energy() {
  mkdir -p results/h200/energy
  "$build"/tests/measure/test_measure_gpu "[energy]" 2>&1 | grep -E "energy counter|skipped|passed|failed" |
    tee results/h200/energy/energy-counter.log
  "$tool" sweep --energy --kernels fa1_wmma,fa2_mma --seq-lens 4096,16384 --head-dims 128 --both \
    --json results/h200/energy/sweep-energy.json --md results/h200/energy/sweep-energy.md \
    2>"$out/sweep-energy.log" | tail -n 20
  local rc=${PIPESTATUS[0]}
  "$tool" audit results/h200/energy/sweep-energy.json 2>&1 | tail -n 5
  local audit_rc=${PIPESTATUS[0]}
  "$tool" table results/h200/energy/sweep-energy.json --columns wide 2>&1 | tail -n 12
  nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu --format=csv -lms 100 \
    >"$out/nvidia-smi-power.csv" 2>&1 &
  local smi=$!
  "$tool" sweep --energy --kernels fa2_mma --seq-lens 16384 --head-dims 128 --causal \
    --json results/h200/energy/smi-row.json 2>"$out/smi-row.log" | tail -n 5
  kill "$smi"
  cp "$out/nvidia-smi-power.csv" results/h200/energy/
  cp results/h200/energy/* "$out/"
  echo "energy: sweep exit $rc, audit exit $audit_rc"
  [[ $audit_rc -eq 0 ]] || status=1
}

# The energy roofline's ceilings (ceilings --energy, docs/energy.md): each
# figure's board energy around a run of its own launch, back to back, for the
# run length the quiet interval sets (about 12.5 s a figure on the H200, every
# figure), and its audit. results/update-readme.sh draws the energy roofline
# from it and the energy sweep (step energy).
step_ceilings_energy() {
  mkdir -p results/h200/energy
  "$tool" ceilings --energy --json results/h200/energy/ceilings-energy.json 2>&1 |
    tee results/h200/energy/ceilings-energy.log | tail -n 30
  local rc=${PIPESTATUS[0]}
  "$tool" audit results/h200/energy/ceilings-energy.json 2>&1 | tail -n 5
  local audit_rc=${PIPESTATUS[0]}
  cp results/h200/energy/ceilings-energy.json results/h200/energy/ceilings-energy.log "$out/"
  echo "ceilings_energy: ceilings exit $rc, audit exit $audit_rc"
  [[ $rc -eq 0 && $audit_rc -eq 0 ]] || status=1
}

# Issue 23 (the limiter from counters, the cycle check, each instruction's
# roof): which of the new counters gh100 has; the wgmma ceiling against
# mma.sync (a GPU test); `ceilings` with the shared-memory and wgmma figures
# (results/h200/limiter/ceilings.json, audited); and a small profiled sweep of
# fa2_mma and fa1_wmma judged on it, audited and shown with --columns why.
step_limiter() {
  mkdir -p results/h200/limiter results/h200/profile
  ncu --query-metrics --chip gh100 >"$out/ncu-metrics-gh100.txt" 2>&1
  local base
  for base in sm__cycles_elapsed sm__pipe_tensor_op_hmma_cycles_active \
    sm__pipe_tensor_op_gmma_cycles_active sm__inst_executed_pipe_fma sm__inst_executed_pipe_lsu \
    l1tex__data_pipe_lsu_wavefronts_mem_shared sm__inst_issued smsp__issue_inst0 \
    smsp__warps_issue_stalled_long_scoreboard smsp__warps_issue_stalled_barrier; do
    grep -Eq "(^|\.)$base( |$)" "$out/ncu-metrics-gh100.txt" && echo "gh100 has $base" ||
      echo "gh100 LACKS $base"
  done | tee "$out/limiter-metrics.log"
  "$build/tests/measure/test_measure_gpu" "the wgmma loop outruns mma.sync where the GPU has it" \
    -s 2>&1 | grep -E "wgmma|passed|failed" | tail -n 5 | tee "$out/limiter-wgmma.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  "$tool" ceilings --instruction-roofs --json results/h200/limiter/ceilings.json 2>&1 | tail -n 20
  "$tool" audit results/h200/limiter/ceilings.json 2>&1 | tail -n 3
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  PROFILE_CEILING=results/h200/limiter/ceilings.json profile_sweep limiter \
    --kernels fa2_mma,fa1_wmma --seq-lens 4096,16384 --head-dims 64,128 --max-seconds 0.5
  "$tool" table results/h200/profile/limiter.json --columns why | tee "$out/limiter-why.txt"
  "$tool" table results/h200/profile/limiter.json \
    --columns "kernel,N,d,timing ratio,cycle ratio,our cycles,ncu cycles" | tee -a "$out/limiter-why.txt"
  cp results/h200/limiter/ceilings.json "$out/"
}

# Issue 23's miss classes, profiled on shapes nobody tuned the L2-aware model
# to (results/h200/profile/misses-*.json): causal with K/V of the running heads
# far past the L2 (N >= 128K, few heads); the full mask at N >= 96K on the
# FA1 kernels; bf16 fa1_wmma at N 128K; fa2_mma with 16-64 heads co-resident;
# and what the issue suspects besides: batch > 1 at long N, d 32.
step_profile_misses() {
  mkdir -p results/h200/profile
  local long=(--warmup 1 --min-samples 3 --max-seconds 2)
  profile_sweep misses-causal-long --kernels fa1_scalar,fa1_wmma,fa2_mma --heads 4 \
    --seq-lens 131072 --head-dims 64,128 --causal "${long[@]}"
  profile_sweep misses-causal-262k --kernels fa1_wmma,fa2_mma --heads 2 --seq-lens 262144 \
    --head-dims 64 --causal "${long[@]}"
  profile_sweep misses-full-long --kernels fa1_scalar,fa1_wmma --heads 4 --seq-lens 98304,131072 \
    --head-dims 64 --no-causal "${long[@]}"
  profile_sweep misses-bf16 --kernels fa1_wmma,fa2_mma --heads 4 --seq-lens 131072 \
    --head-dims 128 --no-causal --dtype fp16,bf16 "${long[@]}"
  profile_sweep misses-heads-h16 --kernels fa2_mma --heads 16 --seq-lens 32768 --head-dims 128 \
    --no-causal "${long[@]}"
  profile_sweep misses-heads-h32 --kernels fa2_mma --heads 32 --seq-lens 16384 --head-dims 64,128 \
    --no-causal "${long[@]}"
  profile_sweep misses-heads-h64 --kernels fa2_mma --heads 64 --seq-lens 8192 --head-dims 128 \
    --both "${long[@]}"
  profile_sweep misses-batch4 --kernels fa2_mma,fa1_wmma --batch 4 --heads 8 --seq-lens 32768 \
    --head-dims 128 --both "${long[@]}"
  profile_sweep misses-d32 --kernels fa2_mma,fa1_wmma,fa1_scalar --heads 8 --seq-lens 65536 \
    --head-dims 32 --both "${long[@]}"
}

# Issue 19's checks that scale: the tiled references against the obvious
# ones, rows checked on a sample, and the [scale] cases timing the checks of
# the issue's rows (each under 60 s).
gpu_test() {
  local binary=$1 filter=$2
  echo "== $binary $filter"
  "$build/tests/$binary" "$filter" 2>&1 | grep -Ev '^$' | tail -n 25 | tee -a "$out/tests.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
}
step_scaled_checks() {
  gpu_test kernels/test_kernels "[tiled]"
  gpu_test kernels/test_bench_gpu "[sampled]"
  gpu_test kernels/test_bench_gpu "[scale]"
}
step_cold_timer() {
  gpu_test measure/test_measure_gpu "[cold_timer]"
}

# Issue 23's timing check, launch by launch (results/h100/timing-check-d64d6e5/ is one run):
# for rows whose cycle ratio missed ±3 %, ncu's SM cycles and CTAs per SM of six launches of
# the row in one profile-child process, with the L2 flushed and not, beside the row timed by
# a plain sweep; then sweep --profile (a warm-up, the median of three launches, each row
# also timed in the profiled process with the timer floor) over the 32 rows around them.
# Files to $out/timing-check/.
step_timing_check() {
  local dir=$out/timing-check spec
  mkdir -p "$dir"
  local metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__cycles_elapsed.max
  metrics+=,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max
  metrics+=,sm__ctas_launched.min,sm__ctas_launched.max,sm__ctas_launched.sum,launch__grid_size
  metrics+=,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
  metrics+=,launch__occupancy_limit_warps,dram__bytes_read.sum
  for spec in "fa1_bwd 2048 128 0" "fa1_scalar 2048 128 0" "fa1_scalar 4096 128 1" \
    "fa1_wmma 4096 64 1" "fa1_wmma 4096 64 0" "fa2_mma 2048 64 1"; do
    set -- $spec
    local name=$1-$2-$3-$4 rows=$dir/rows-$1-$2-$3-$4.txt flush
    : >"$rows"
    for launch in 0 1 2 3 4 5; do echo "$launch $1 fp16 1 8 $2 $3 $4 0 $2 8 0" >>"$rows"; done
    for flush in all none; do
      ncu --csv --page raw --print-units base --clock-control none --cache-control "$flush" \
        --nvtx --nvtx-include cfr_profile/ --metrics "$metrics" "$tool" profile-child \
        --rows "$rows" --seed 1 --warmup 0 >"$dir/ncu-$name-$flush.csv" 2>"$dir/ncu-$name-$flush.log" ||
        status=1
    done
    "$tool" sweep --kernels "$1" --seq-lens "$2" --head-dims "$3" \
      "$([[ $4 == 1 ]] && echo --causal || echo --no-causal)" --max-seconds 0.5 \
      --json "$dir/sweep-$name.json" >/dev/null 2>&1 || status=1
  done
  "$tool" sweep --profile --kernels fa1_scalar,fa1_bwd,fa1_wmma,fa2_mma --seq-lens 2048,4096 \
    --head-dims 64,128 --both --max-seconds 0.3 --json "$dir/profile-timing.json" \
    >"$dir/profile-timing.txt" 2>"$dir/profile-timing.log" || status=1
  "$tool" table "$dir/profile-timing.json" --status ok \
    --columns 'kernel,dir,H,N,d,causal,median ms,cycle ratio,process cycle ratio,sweep/process,timer floor,launch spread' |
    tee "$dir/profile-timing-table.txt"
}

# Issue 23's rows of several kernels (results/h100/timing-default-c2096c7/README.md): ncu's
# kernel replay flushes the caches before every profiled kernel, its range replay once per
# NVTX range, as our samples flush once a row. Both over naive N 1024 d 64 and N 2048 d 128,
# fa3_bwd and fa1_bwd N 2048 d 128 (three profiled launches each, timed in the process too),
# then six fa1_bwd launches with four metrics (its slow mode against the metric set). Files
# to $out/replay-modes/.
step_replay_modes() {
  local dir=$out/replay-modes mode
  mkdir -p "$dir"
  local m=gpu__time_duration.sum,sm__cycles_elapsed.avg,dram__bytes_read.sum,dram__bytes_write.sum
  printf '%s\n' "0 naive fp16 1 8 1024 64 0 0 1024 8 0" "1 naive fp16 1 8 2048 128 0 0 2048 8 0" \
    "2 fa3_bwd fp16 1 8 2048 128 0 0 2048 8 0" "3 fa1_bwd fp16 1 8 2048 128 0 0 2048 8 0" >"$dir/rows.txt"
  for mode in kernel range; do
    ncu --csv --page raw --print-units base --clock-control none --cache-control all \
      --replay-mode "$mode" --nvtx --nvtx-include cfr_profile/ --metrics "$m" \
      "$tool" profile-child --rows "$dir/rows.txt" --seed 1 --warmup 1 --launches 3 \
      --time-samples 10 --floor-kernels 3 --timing-out "$dir/timing-$mode.json" \
      >"$dir/ncu-$mode.csv" 2>"$dir/ncu-$mode.log" || status=1
  done
  echo "3 fa1_bwd fp16 1 8 2048 128 0 0 2048 8 0" >"$dir/rows-bwd.txt"
  ncu --csv --page raw --print-units base --clock-control none --cache-control all \
    --nvtx --nvtx-include cfr_profile/ --metrics "$m,sm__ctas_launched.max,sm__ctas_launched.min" \
    "$tool" profile-child --rows "$dir/rows-bwd.txt" --seed 1 --warmup 1 --launches 6 \
    >"$dir/ncu-bwd-few.csv" 2>"$dir/ncu-bwd-few.log" || status=1
}

# Issue 19's fa2_bwd and fa2_bwd_2d: the backward GPU tests (every backward
# kernel on the test grid, GQA refused where a kernel lacks it, the reused
# workspace and sm_86 tile of both), memcheck and racecheck over both
# kernels' instantiations on ragged N (fa2_bwd_2d has no d 32: its rows skip).
# step_peers_backward times them against torch; the default sweep
# (step_results, --backward) against fa1_bwd.
step_fa2bwd() {
  # The SASS of both kernels' main loops, to count what ptxas predicated.
  sass_of fa2_backward_main >"$out/fa2bwd-sass.txt"
  awk '/Function :/ {f = $3} /HMMA/ {h[f]++} /^ *\/\*[0-9a-f]+\*\/ *@!?U?P[0-9T]/ {p[f]++}
       /^ *\/\*[0-9a-f]+\*\// {n[f]++}
       END {for (k in n) print k, "instructions", n[k], "predicated", p[k] + 0, "HMMA", h[k] + 0}' \
    "$out/fa2bwd-sass.txt" | tee "$out/fa2bwd-sass-counts.txt"
  "$build/tests/kernels/test_kernels" "[backward]" 2>&1 | tail -n 40 | tee "$out/fa2bwd-tests.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  sanitize fa2bwd-sanitizer " (fa2_bwd, fa2_bwd_2d)" sweep --gpu h200 --kernels fa2_bwd,fa2_bwd_2d \
    --backward --seq-lens 17,130 --head-dims 32,64,128 --both --dtype fp16,bf16 --warmup 0 \
    --min-samples 1 --max-seconds 0.01 --hot
}

# The backward kernels against torch's on shapes issue 19 does not name
# (B 2, H 16, N 4100 and 6000: ragged last blocks, bf16, d 64 and 128,
# both masks) into results/h200/backward-other/, and one checked fa3_bwd row
# at B 1 H 4 N 131072 d 64 (the fp32 check of issue 19 at 128K tokens).
step_peers_backward_other() {
  torch_judgement peers_backward_other results/h200/backward-other sweep-bwd-other \
    torch-sdpa-backward-other fa2_bwd_2d,fa3_bwd fa3_bwd,fa2_bwd_2d fa2_bwd_2d --backward -- \
    --batch 2 --heads 16 --seq-lens 4100,6000 --head-dims 64,128 --both --dtype bf16 \
    --max-seconds 0.5
  timed_sweep fa3bwd-n128k --kernels fa3_bwd --backward --batch 1 --heads 4 --seq-lens 131072 \
    --head-dims 64 --max-seconds 1
}

# Where fa2_bwd_2d's ragged rows lose (issue 19: SLOWER than flash at N 4100
# without a mask, FASTER at 6000): N 4096 and just past it, B 2 H 16 bf16 d 64
# without a mask, beside torch's, into results/<gpu>/backward-ragged/.
step_peers_backward_ragged() {
  local dir
  dir=$(gpu_results_dir backward-ragged)
  torch_judgement peers_backward_ragged "$dir" sweep-bwd-ragged torch-sdpa-backward-ragged \
    fa2_bwd_2d fa2_bwd_2d fa2_bwd_2d --backward -- --batch 2 --heads 16 \
    --seq-lens 4096,4100,4160,4224,4352 --head-dims 64 --dtype bf16 --max-seconds 0.3
}

# fa2_bwd_2d before and after a change, in one call: the build in
# CFR_BASE_BUILD (another unpacked build directory) and this one in turn,
# twice, on N 4096 and just past it (ragged last K/V blocks of 1-64 keys, and
# 4224 whole), B 1 and 2, H 16, d 64 and 128, bf16, no mask, into
# results/<gpu>/backward-ab/; `compare` of each round (base -> new).
step_bwd_ab() {
  local dir base=${CFR_BASE_BUILD:-}
  [[ -x $base/app/cuflash-roofline ]] || { echo "bwd_ab: no CFR_BASE_BUILD/app/cuflash-roofline"; status=1; return; }
  dir=$(gpu_results_dir backward-ab)
  mkdir -p "$dir"
  "$base/app/cuflash-roofline" --version >"$dir/base-version.txt"
  "$tool" --version >"$dir/new-version.txt"
  local round side app
  for round in 1 2; do
    for side in base new; do
      app=$tool
      [[ $side == base ]] && app=$base/app/cuflash-roofline
      "$app" sweep --kernels fa2_bwd_2d --batch 1,2 --heads 16 \
        --seq-lens 4096,4097,4100,4112,4128,4160,4224 --head-dims 64,128 --dtype bf16 \
        --max-seconds 0.2 --json "$dir/$side-$round.json" >"$dir/$side-$round.txt" \
        2>"$dir/$side-$round.log" || status=1
      "$tool" audit "$dir/$side-$round.json" 2>&1 | tail -n 1
    done
    "$tool" compare "$dir/base-$round.json" "$dir/new-$round.json" >"$dir/compare-$round.txt" 2>&1
    grep -E 'fa2_bwd_2d|geomean' "$dir/compare-$round.txt" | cut -c1-150
  done
}

# The backward kernels that take GQA against torch's (enable_gqa) on Llama-3
# 8B's grouping, 32 query heads over 8 K/V heads: results/h200/backward-gqa/.
step_peers_backward_gqa() {
  torch_judgement peers_backward_gqa results/h200/backward-gqa sweep-bwd-gqa \
    torch-sdpa-backward-gqa fa2_bwd,fa3_bwd fa3_bwd,fa2_bwd fa2_bwd --backward -- \
    --batch 1 --heads 32 --kv-heads 8 --seq-lens 4096,8192 --head-dims 64,128 --both \
    --dtype bf16 --max-seconds 0.5
}

# fa3_bwd (the backward on wgmma; a -Dgpu_archs=90a build): its main
# kernel's SASS (HGMMA, spills), the backward GPU tests, memcheck and
# racecheck over small ragged shapes; step_peers_backward times it.
step_fa3bwd() {
  sass_of fa3_backward_main >"$out/fa3bwd-sass.txt"
  awk '/Function :/ {f = $3} /HGMMA/ {h[f]++} /STL/ {s[f]++}
       END {for (k in h) print k, "HGMMA", h[k], "STL", s[k] + 0}' \
    "$out/fa3bwd-sass.txt" | tee "$out/fa3bwd-sass-counts.txt"
  "$build/tests/kernels/test_kernels" "[backward]" 2>&1 | tail -n 40 | tee "$out/fa3bwd-tests.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  # racecheck over 24 such rows ran past 250 s (each row runs its forward
  # partner, fa3_wgmma, under the tool too): memcheck takes them all (MQA and
  # MHA: 48 rows), racecheck the ragged N 130 at both head dims and masks.
  local rows=(sweep --gpu h200 --kernels fa3_bwd --backward --head-dims 64,128 --both --warmup 0
              --heads 4 --kv-heads 1,4 --min-samples 1 --max-seconds 0.01 --hot)
  SANITIZE_TOOLS=memcheck sanitize fa3bwd-sanitizer " (fa3_bwd)" "${rows[@]}" \
    --seq-lens 17,130,257 --dtype fp16,bf16
  SANITIZE_TOOLS=racecheck sanitize fa3bwd-sanitizer " (fa3_bwd)" "${rows[@]}" --seq-lens 130 \
    --dtype fp16
}

# The SASS of the tool's kernels whose mangled name contains PATTERN.
sass_of() {
  cuobjdump -sass "$tool" 2>&1 | awk -v pattern="$1" '/Function :/ {keep = index($3, pattern) > 0} keep'
}

# A timed sweep into $out/NAME-sweep.json (stderr to NAME-sweep.log) and its
# audit; either failing fails the run.
timed_sweep() {
  local name=$1
  shift
  "$tool" sweep "$@" --json "$out/$name-sweep.json" 2>"$out/$name-sweep.log" | tail -n 60
  local rc=${PIPESTATUS[0]}
  "$tool" audit "$out/$name-sweep.json" 2>&1 | tail -n 5
  local audit_rc=${PIPESTATUS[0]}
  echo "$name: sweep exit $rc, audit exit $audit_rc"
  [[ $rc -eq 0 && $audit_rc -eq 0 ]] || status=1
}

# fa3_wgmma (issue 22; needs a build with -Dgpu_archs=90a): its SASS (HGMMA,
# UTMALDG, SYNCS per instantiation), the forward GPU tests (square grid,
# served shapes, explicit scale), memcheck and racecheck over small ragged
# shapes; step_peers_fa3 times it.
step_fa3() {
  sass_of fa3_wgmma >"$out/fa3-sass.txt"
  awk '/Function :/ {f = $3 ~ /fa3_wgmma/ ? $3 : ""} f == "" {next}
       /HGMMA/ {h[f]++} /UTMALDG/ {t[f]++} /SYNCS/ {s[f]++}
       END {for (k in h) print k, "HGMMA", h[k], "UTMALDG", t[k], "SYNCS", s[k]}' \
    "$out/fa3-sass.txt" | tee "$out/fa3-sass-counts.txt"
  # Never run on a GPU before: one small checked row first, under a timeout,
  # so a hang costs 60 s and not the call (the rest of the step is skipped;
  # a wrong result is not a hang: the tests below then say where).
  timeout -s KILL 60 "$tool" sweep --gpu h200 --kernels fa3_wgmma --seq-lens 257 --head-dims 64 \
    --causal --warmup 0 --min-samples 1 --max-seconds 0.01 --json "$out/fa3-smoke.json" \
    >"$out/fa3-smoke.log" 2>&1
  local smoke_rc=$?
  tail -n 12 "$out/fa3-smoke.log"
  echo "fa3 smoke: exit $smoke_rc"
  [[ $smoke_rc -eq 0 ]] || status=1
  [[ $smoke_rc -ne 137 ]] || return
  timeout -s KILL 300 "$build/tests/kernels/test_kernels" "[forward]" 2>&1 | tail -n 40 |
    tee "$out/fa3-tests.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  sanitize fa3-sanitizer " (fa3_wgmma)" sweep --gpu h200 --kernels fa3_wgmma \
    --seq-lens 17,130,257 --head-dims 64,128 --both --dtype fp16,bf16 --warmup 0 --min-samples 1 \
    --max-seconds 0.01 --hot
}

# Our kernels and torch's flash and cuDNN backends on the same axes and
# timing flags in one run (the judgement of a kernel issue): our sweep of
# KERNELS into DIR/OURS.json, peers/torch_sdpa.py into DIR/PEERS.json (the
# direction flags, --backward or none, go to both), each audited, then each
# kernel of JUDGED (a comma list) against each backend per shape, and the
# first of JUDGED against BASE in our report (the report against itself,
# BASE's rows matched to it). Everything is copied to $out.
# usage: torch_judgement NAME DIR OURS PEERS KERNELS JUDGED BASE DIRECTION_FLAGS -- AXES...
torch_judgement() {
  local name=$1 dir=$2 ours=$3 peers=$4 kernels=$5 judged=$6 base=$7
  shift 7
  local direction=()
  while [[ $1 != -- ]]; do direction+=("$1"); shift; done
  shift
  local axes=("$@")
  if [[ ! -x $tool ]]; then
    echo "$name: $tool is not built"
    status=1
    return
  fi
  mkdir -p "$dir"
  "$tool" sweep --kernels "$kernels" "${direction[@]}" "${axes[@]}" --json "$dir/$ours.json" \
    --md "$dir/$ours.md" 2>"$out/$ours.log" | tail -n 3
  local rc=${PIPESTATUS[0]}
  echo "$name: $kernels sweep exit $rc (0 expected; log $ours.log)"
  [[ $rc -eq 0 ]] || status=1
  # Without a device the sweep writes the model alone, and exits 0.
  if ! grep -q '"source": "measured"' "$dir/$ours.json" 2>/dev/null; then
    echo "$name: $dir/$ours.json holds no measurement (no CUDA device?)"
    status=1
  fi
  peer_script "${axes[@]}" "${direction[@]}" --backends flash,cudnn --json "$dir/$peers.json" \
    2>"$out/$peers.log"
  rc=$?
  tail -n 3 "$out/$peers.log"
  echo "$name: torch exit $rc (0, or 1 for a failed row the report records)"
  [[ $rc -le 1 ]] || status=1
  cp "$dir"/*.json "$dir"/*.md "$out/" 2>/dev/null
  local report
  for report in "$ours" "$peers"; do
    if [[ ! -s $dir/$report.json ]]; then
      echo "$name: $dir/$report.json was not written"
      status=1
      return
    fi
    "$tool" audit "$dir/$report.json" >"$out/$report-audit.txt" 2>&1
    rc=$?
    echo "$name: audit $report exit $rc: $(tail -n 1 "$out/$report-audit.txt")"
    [[ $rc -eq 0 ]] || status=1
  done
  local kernel peer text
  local -a judged_kernels texts=()
  IFS=, read -r -a judged_kernels <<<"$judged"
  for kernel in "${judged_kernels[@]}"; do
    for peer in flash cudnn; do
      text=$dir/${kernel//_/-}-vs-$peer.txt
      texts+=("$text")
      "$tool" compare "$dir/$peers.json" "$dir/$ours.json" \
        --match-kernel "torch_sdpa_$peer=$kernel" >"$text" 2>&1
      echo "$name: compare $kernel against torch_sdpa_$peer exit $?"
      grep -E "FASTER|SLOWER|SAME|AMBIGUOUS|geomean|NOTHING" "$text" | grep -v "^only" | head -n 30
    done
  done
  kernel=${judged_kernels[0]}
  text=$dir/${kernel//_/-}-vs-${base//_/-}.txt
  "$tool" compare "$dir/$ours.json" "$dir/$ours.json" --match-kernel "$base=$kernel" >"$text" 2>&1
  echo "$name: compare $kernel against $base exit $?"
  grep -E "$kernel (vs|over) $base|geomean" "$text" | head -n 30
  # Written beside the reports, so two judgements of one call keep their own
  # (in $out they share names), and copied to $out as before.
  texts+=("$text")
  cp "${texts[@]}" "$out/"
}

# Issue 22's judgement in one run: fa3_wgmma and fa2_mma, and torch's cuDNN
# and flash forward, on the issue's axes (B1 H8, N 4K..16K, d 64/128,
# fp16/bf16, both masks); the reports go to results/h200/fa3/, fa3_wgmma is
# compared with each peer and with fa2_mma. 24 problems a side at 0.5 s a
# row: about 3 minutes.
step_peers_fa3() {
  torch_judgement peers_fa3 results/h200/fa3 sweep-fa3 torch-sdpa-forward fa2_mma,fa3_wgmma \
    fa3_wgmma fa2_mma -- --batch 1 --heads 8 --seq-lens 4096,8192,16384 --head-dims 64,128 \
    --both --dtype fp16,bf16 --max-seconds 0.5
}

# fa3_wgmma against torch's forward on shapes issue 22 does not name (B4 H16,
# N 2048 and 5000, d 64/128, bf16, both masks), where the K/V block rule of
# revision 7 takes both block lengths; the reports go to results/h200/fa3-other/.
step_peers_fa3_other() {
  torch_judgement peers_fa3_other results/h200/fa3-other sweep-fa3 torch-sdpa-forward fa3_wgmma \
    fa3_wgmma fa3_wgmma -- --batch 4 --heads 16 --seq-lens 2048,5000 --head-dims 64,128 \
    --both --dtype bf16 --max-seconds 0.5
}

# Where fa3_wgmma's time goes against cuDNN's forward without a mask: both
# timed by the same cold timer at B1 H8 N 256-16384, d 64/128 fp16 (one round of
# tiles up to N 2048), and Nsight Compute of one launch of each kernel at
# N 4096 (duration, launch geometry, pipes, instructions, stall reasons); the
# peer script's own timing fails under ncu (exit 1), its profiled launch does
# not. Files to results/h200/fa3/diag/ (results/h100/fa3-q2-09fb08d/diag/ is
# one run of it).
step_fa3_vs_cudnn() {
  local dir=results/h200/fa3/diag
  mkdir -p "$dir"
  local axes=(--batch 1 --heads 8 --seq-lens 256,1024,2048,4096,16384 --head-dims 64,128
              --dtype fp16 --max-seconds 0.2)
  "$tool" sweep --kernels fa3_wgmma "${axes[@]}" --json "$dir/ours.json" >"$dir/ours.txt" 2>&1 ||
    status=1
  peer_script "${axes[@]}" --backends cudnn --json "$dir/torch.json" >"$dir/torch.txt" 2>&1
  [[ $? -le 1 ]] || status=1
  "$tool" compare "$dir/torch.json" "$dir/ours.json" --match-kernel torch_sdpa_cudnn=fa3_wgmma |
    grep -E "cudnn|geomean"
  local metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__cycles_active.avg
  metrics+=,launch__grid_size,launch__block_size,launch__registers_per_thread
  metrics+=,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static
  metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  local pipe
  for pipe in xu fma alu; do
    metrics+=,sm__inst_executed_pipe_$pipe.avg.pct_of_peak_sustained_active
  done
  metrics+=,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active
  metrics+=,dram__bytes_read.sum
  local reason
  for reason in long_scoreboard wait barrier math_pipe_throttle membar sleeping dispatch_stall \
      mio_throttle short_scoreboard no_instruction selected not_selected; do
    metrics+=,smsp__warps_issue_stalled_$reason.avg
  done
  local profile=(ncu --csv --page raw --cache-control all --clock-control none --metrics "$metrics")
  local d
  for d in 64 128; do
    timeout 120 "${profile[@]}" -k regex:fa3_wgmma --launch-count 1 "$tool" sweep \
      --kernels fa3_wgmma --heads 8 --seq-lens 4096 --head-dims $d --dtype fp16 --warmup 0 \
      --min-samples 1 --max-seconds 0.01 >"$dir/ncu-ours-n4096-d$d.csv" 2>"$dir/ncu-ours-n4096-d$d.log"
    echo "ncu fa3_wgmma d $d: exit $?"
    timeout 150 "${profile[@]}" -k 'regex:sdpa|fmha|flash|Sdpa|Fmha' --launch-skip 2 --launch-count 1 \
      python3 peers/torch_sdpa.py --tree-stamp "$build/peers/tree_stamp.json" --tool "$tool" \
      --heads 8 --seq-lens 4096 --head-dims $d --dtype fp16 --backends cudnn --warmup 1 \
      --min-samples 2 --max-seconds 0.01 --json "$out/ncu-torch-scratch.json" \
      >"$dir/ncu-cudnn-n4096-d$d.csv" 2>"$dir/ncu-cudnn-n4096-d$d.log"
    echo "ncu cudnn d $d: exit $? (1 expected: the peer's timing fails under ncu)"
  done
}

# Where d 64's gap to cuDNN without a mask comes from (issue 22, v8.2): the tile
# count (B x H x N / 128) and the tile length (N / 128 blocks) varied apart,
# fa3_wgmma and torch's cuDNN forward timed by the same cold timer, fp16.
# If the gap follows the tile length, a tile's fixed cost is the suspect; if
# the tile count (rounds of 132 CTAs), the schedule. Files to results/h200/fa3/gap/.
step_fa3_gap() {
  local dir=results/h200/fa3/gap
  mkdir -p "$dir"
  local axes=(--batch 1,2 --heads 4,8,16 --seq-lens 2048,4096,6144,8192 --head-dims 64
              --dtype fp16 --max-seconds 0.2)
  "$tool" sweep --kernels fa3_wgmma "${axes[@]}" --json "$dir/ours.json" >"$dir/ours.txt" 2>&1 ||
    status=1
  peer_script "${axes[@]}" --backends cudnn --json "$dir/torch.json" >"$dir/torch.txt" 2>&1
  [[ $? -le 1 ]] || status=1
  "$tool" compare "$dir/torch.json" "$dir/ours.json" --match-kernel torch_sdpa_cudnn=fa3_wgmma \
    >"$dir/compare.txt" 2>&1
  grep -E "FASTER|SLOWER|SAME|AMBIGUOUS|geomean" "$dir/compare.txt" | head -n 40
}

# Issue 19's judgement in one run: the backward sweep of both tilings,
# fa2_bwd and fa2_bwd_2d (--backward adds fa1_bwd's rows), and torch's flash
# and cuDNN backward (peers/torch_sdpa.py --backward: the backward alone, by
# the same cold timer) on the same axes and timing flags; the reports go to
# results/h200/backward/, each of our two is compared with each of torch's
# (ratio = ours / torch), and fa2_bwd_2d with fa2_bwd. 24 problems a side at
# 0.5 s a row: about 3-4 minutes.
step_peers_backward() {
  torch_judgement peers_backward results/h200/backward sweep-fa2-bwd torch-sdpa-backward \
    fa2_bwd,fa2_bwd_2d,fa3_bwd fa3_bwd,fa2_bwd_2d,fa2_bwd fa2_bwd_2d --backward -- --batch 1 --heads 8 \
    --seq-lens 4096,8192,16384 --head-dims 64,128 --both --dtype fp16,bf16 --max-seconds 0.5
}

# results/<gpu>/NAME for the GPU of this machine: h100, h200, else other.
gpu_results_dir() {
  local gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z')
  echo "results/${gpu:-other}/$1"
}

# The GPU, its driver and clocks, and Nsight Compute's version into DIR/environment.txt.
write_environment() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$1/environment.txt"
  ncu --version >>"$1/environment.txt"
}

# How much of a cyclically re-read working set the L2 keeps, by its size
# (tests/gpu/l2_loop_probe.cu): event times, then DRAM bytes per launch under
# Nsight Compute with the caches flushed, at 4 and 2 CTAs an SM, first with
# CTAs that only read, then (fewer sizes) with 64 and 512 dependent FMAs a
# thread after each 4 KiB chunk. About two minutes. The CSVs go to
# results/<gpu>/l2-loop/ (docs/model.md, "What the L2 keeps of a loop").
step_l2_loop() {
  local dir per_sm work suffix sizes
  dir=$(gpu_results_dir l2-loop)
  mkdir -p "$dir"
  for work in 0 64 512; do
    sizes=8,12,16,20,22,24,26,28,29,30,31,32,34,36,40,44,48,52,56,60,64,72,80
    suffix=
    if ((work > 0)); then sizes=16,20,22,24,28,32,40,48,64,80 suffix=-w$work; fi
    for per_sm in 4 2; do
      "$build/tests/gpu/l2_loop_probe" "$per_sm" "$sizes" "$work" >"$dir/events-$per_sm$suffix.csv" 2>&1 ||
        status=1
      ncu --csv --page raw --print-units base --clock-control none --cache-control all \
        --nvtx --nvtx-include cfr_profile/ --metrics "$l2data_metrics,gpu__time_duration.sum" \
        "$build/tests/gpu/l2_loop_probe" "$per_sm" "$sizes" "$work" >"$dir/ncu-$per_sm$suffix.csv" \
        2>"$out/l2-loop-$per_sm$suffix.log" || status=1
      echo "l2_loop $per_sm a SM, work $work: $(grep -c cyclic_read "$dir/ncu-$per_sm$suffix.csv") profiled launches"
    done
  done
  write_environment "$dir"
  head -n 3 "$dir/events-4.csv"
}

# The last N check lines of fa2bwd_variants' output FILE (its timed rows and
# their samples left out: the files keep them).
variant_checks() {
  grep -v '^ ' "$1" | grep -v "^[a-z0-9_]* *[0-9]* *[01] " | tail -n "$2"
}

# fa2_bwd's variants (CFR_FA2BWD_FILTER, default 2d_d) checked and timed, then
# torch's flash backward by the peer script on the variants' timed axes (B 1,
# H 8, N 4K-16K, fp16, both masks), in one call, so a variant's time reads
# against flash's of the same session. Into results/<gpu>/fa2bwd-variants/.
step_fa2bwd_vs_flash() {
  local dir
  dir=$(gpu_results_dir fa2bwd-variants)
  mkdir -p "$dir"
  "$build/tests/gpu/fa2bwd_variants" "${CFR_FA2BWD_FILTER:-2d_d}" >"$dir/variants.txt" 2>&1 || status=1
  variant_checks "$dir/variants.txt" 30
  peer_script --backward --backends flash --batch 1 --heads 8 --seq-lens 4096,8192,16384 \
    --head-dims 64,128 --both --dtype fp16 --max-seconds 0.3 --json "$dir/flash-backward.json" \
    >"$dir/flash-backward.log" 2>&1
  [[ $? -le 1 ]] || status=1
  tail -n 16 "$dir/flash-backward.log"
}

# Where each of fa2_bwd_2d's warps spends a Q block: the *_clock variants
# (BwdTuning::barrier_clock, clock reads around each part and barrier; the
# list in CFR_CLOCK_VARIANTS, default revision 3's) at B 1, H 8, N 8192,
# fp16, both masks, cycles per block by warp and part; then the variants
# CFR_FA2BWD_FILTER chooses (default revision 3's and their clocked twins)
# checked and timed in turn, which says what the clock reads cost. Into
# results/<gpu>/fa2bwd-clocks/. About a minute and a half.
step_fa2bwd_clocks() {
  local dir name causal
  dir=$(gpu_results_dir fa2bwd-clocks)
  mkdir -p "$dir"
  : >"$dir/clocks.txt"
  for name in ${CFR_CLOCK_VARIANTS:-2d_d64_rev3_clock 2d_d128_rev3_clock 2d_d64_br128_rev3_clock}; do
    for causal in 0 1; do
      "$build/tests/gpu/fa2bwd_variants" --clocks "$name" 8 8192 "$causal" >>"$dir/clocks.txt" 2>&1 ||
        status=1
    done
  done
  cat "$dir/clocks.txt"
  "$build/tests/gpu/fa2bwd_variants" "${CFR_FA2BWD_FILTER:-_rev3}" >"$dir/variants.txt" 2>&1 ||
    status=1
  variant_checks "$dir/variants.txt" 12
  write_environment "$dir"
}

# Where fa2_bwd_2d's warps wait, instruction by instruction, beside torch's
# flash (FA2) backward: one launch of each main kernel (B 1, H 8, N 8192,
# fp16, no mask, d 64 and 128) under Nsight Compute with the source counters,
# the warp states and the instruction mix; each report's details and its
# per-SASS-instruction table (warp stall samples by reason) as CSV into
# results/<gpu>/bwd-source/ (the .ncu-rep files stay in $out: the repository
# and its carried build must stay under the device tool's transfer limit). Issue 19:
# fa2_bwd_2d takes 1.10-1.20x flash's time without a mask. About 2 minutes.
step_bwd_source() {
  local dir d
  dir=$(gpu_results_dir bwd-source)
  mkdir -p "$dir"
  local sections=(--section WarpStateStats --section SourceCounters --section InstructionStats
                  --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats
                  --section Occupancy --section LaunchStats)
  for d in 64 128; do
    ncu "${sections[@]}" --import-source yes --cache-control all --clock-control none \
      -k regex:fa2_backward_main_2d --launch-count 1 -f -o "$out/ours-d$d" \
      "$tool" sweep --gpu auto --kernels fa2_bwd_2d --backward --batch 1 --heads 8 --seq-lens 8192 \
      --head-dims "$d" --dtype fp16 --warmup 0 --min-samples 1 --max-seconds 0.01 --hot \
      >"$dir/ours-d$d.log" 2>&1 || status=1
    cat >"$out/flash_bwd_d$d.py" <<PY
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v, do = [torch.randn(1, 8, 8192, $d, device="cuda", dtype=torch.half) for _ in range(4)]
for t in (q, k, v): t.requires_grad_()
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    o = F.scaled_dot_product_attention(q, k, v)
    o.backward(do)
torch.cuda.synchronize()
print(torch.__version__, torch.cuda.get_device_name(0))
PY
    ncu "${sections[@]}" --import-source yes --cache-control all --clock-control none \
      -k regex:dq_dk_dv --launch-count 1 -f -o "$out/flash-d$d" python3 "$out/flash_bwd_d$d.py" \
      >"$dir/flash-d$d.log" 2>&1 || status=1
    for who in ours flash; do
      [[ -f $out/$who-d$d.ncu-rep ]] || continue
      ncu --import "$out/$who-d$d.ncu-rep" --page details --csv >"$dir/$who-d$d-details.csv" 2>&1
      ncu --import "$out/$who-d$d.ncu-rep" --page source --csv --print-source sass \
        >"$dir/$who-d$d-sass.csv" 2>&1
      gzip -9nf "$dir/$who-d$d-sass.csv"
      echo "bwd_source $who d $d: $(grep -c . "$dir/$who-d$d-details.csv") detail lines"
    done
  done
  write_environment "$dir"
}

for step in "$@"; do
  if ! declare -F "step_$step" >/dev/null; then
    echo "device_run.sh: no step '$step' (the steps are listed at the top of this file)" >&2
    status=1
    continue
  fi
  "step_$step"
done
exit $status
