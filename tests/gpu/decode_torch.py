#!/usr/bin/env python3
"""torch SDPA (flash and cuDNN, enable_gqa) on decode_dev's shapes, in the same
device call and by the same rules: cold L2 (a 256 MB write before each
sample), CUDA events, median after 3 warm-ups. Prefill GQA shapes first (for
fa2_mma's --fa2 mode), then decode (one query token). A development aid whose
output results/h200/decode-dev/ keeps; the judged comparison is
peers/torch_sdpa.py's report."""
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
def cold(fn, n=20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True); out=[]
    for i in range(-3, n):
        flush.zero_(); s.record(); fn(); e.record(); e.synchronize()
        if i >= 0: out.append(s.elapsed_time(e))
    out.sort(); return out[len(out)//2]
BE=(("flash",SDPBackend.FLASH_ATTENTION),("cudnn",SDPBackend.CUDNN_ATTENTION))
for d in (128, 64):
  for (b,h,hkv,n,causal) in ((1,32,8,8192,1),(1,32,8,8192,0),(1,32,8,4096,1),(1,32,8,16384,1),(1,32,8,16384,0),(4,32,8,4096,1),(1,32,4,8192,1)):
    q=torch.randn(b,h,n,d,device="cuda",dtype=torch.float16); k=torch.randn(b,hkv,n,d,device="cuda",dtype=torch.float16); v=torch.rand_like(k)
    cells=[]
    for name,be in BE:
        try:
            with sdpa_kernel([be]):
                f=lambda: F.scaled_dot_product_attention(q,k,v,is_causal=bool(causal),enable_gqa=True); f(); cells.append(f"{name} {cold(f,15)*1e3:.1f}")
        except RuntimeError: cells.append(f"{name} --")
    print(f"torch prefill d{d} B{b} H{h}/{hkv} N{n} causal{causal} | "+" | ".join(cells), flush=True)
for d in (128, 64):
  for hkv in (8, 32):
    for b in (1, 8, 32, 128):
      for nk in (2048, 8192, 32768, 131072):
        if b*nk*hkv > (32 << 20): continue
        q=torch.randn(b,32,1,d,device="cuda",dtype=torch.float16); k=torch.randn(b,hkv,nk,d,device="cuda",dtype=torch.float16); v=torch.rand_like(k)
        cells=[]
        for name,be in BE:
            try:
                with sdpa_kernel([be]):
                    f=lambda: F.scaled_dot_product_attention(q,k,v,enable_gqa=True); f(); cells.append(f"{name} {cold(f)*1e3:.1f}")
            except RuntimeError: cells.append(f"{name} --")
        print(f"torch d{d} B{b} H32/{hkv} Nk{nk} | "+" | ".join(cells), flush=True)
        del q,k,v
