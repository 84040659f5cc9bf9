#!/usr/bin/env bash
# Nsight Compute counters of the FA1 forward kernels at the seed's headline
# shape (B=1 H=8 N=16384, non-causal), d = 64 and 128: DRAM and L2 bytes,
# pipe utilizations, occupancy. One launch each (the correctness-check run of
# a one-sample sweep). ncu locks the SM clock to base by default, so its
# durations are longer than the sweep's; its byte counts do not depend on it.
# Writes NAME.ncu-rep and NAME-details.txt to $OUT (or /tmp/cfr-out).
set -uo pipefail
build=${CFR_BUILD_DIR:-build-h200}
out=${OUT:-/tmp/cfr-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
for spec in "fa1_wmma 64" "fa1_wmma 128" "fa1_scalar 64" "fa1_scalar 128"; do
  read -r kernel head_dim <<<"$spec"
  name=$kernel-d$head_dim
  ncu --kernel-name "regex:${kernel}_forward" --launch-count 1 --section SpeedOfLight \
    --section Occupancy --metrics "$metrics" --export "$out/$name" \
    "$build/app/cuflash-roofline" sweep --gpu h200 --seq-lens 16384 --head-dims "$head_dim" \
    --no-causal --kernels "$kernel" --warmup 0 --min-samples 1 --max-seconds 0.01 --hot \
    >"$out/$name-sweep.txt" 2>&1
  ncu --import "$out/$name.ncu-rep" --page details --print-units base >"$out/$name-details.txt"
done
