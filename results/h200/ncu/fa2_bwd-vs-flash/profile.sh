#!/usr/bin/env bash
# fa2_bwd vs torch flash backward under ncu: one launch each, d64 and d128, N8192 H8 fp16.
set -u
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
tar xzf .device-build/build-h200.tgz -C .device-build
b=.device-build/build-h200; tool=$b/app/cuflash-roofline
o=/tmp/prof; mkdir -p $o
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section InstructionStats"
for d in 64 128; do
  ncu $S -k regex:fa2_backward_main -c 1 -o $o/ours-d$d -f $tool sweep --gpu h200 --kernels fa2_bwd --backward --seq-lens 8192 --heads 8 --head-dims $d --dtype fp16 --warmup 0 --min-samples 1 --max-seconds 0.01 --hot >/dev/null 2>$o/ours-d$d.err
  ncu --import $o/ours-d$d.ncu-rep --page details > $o/ours-d$d.txt 2>&1
  cat > $o/t.py <<PY
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q,k,v,do=[torch.randn(1,8,8192,$d,device='cuda',dtype=torch.half) for _ in range(4)]
for t in (q,k,v): t.requires_grad_()
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
  o=F.scaled_dot_product_attention(q,k,v); o.backward(do)
torch.cuda.synchronize()
PY
  ncu $S -k regex:"bwd" -c 3 -o $o/flash-d$d -f python3 $o/t.py >/dev/null 2>$o/flash-d$d.err
  ncu --import $o/flash-d$d.ncu-rep --page details > $o/flash-d$d.txt 2>&1
done
cuobjdump --dump-resource-usage $b/app/cuflash-roofline 2>/dev/null | grep -A1 fa2_backward_main | head -20 > $o/res.txt
ls -la $o; tar czf $OUT/prof.tgz -C /tmp prof
