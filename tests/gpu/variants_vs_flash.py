#!/usr/bin/env python3
"""fa2bwd_variants' times over torch's flash backward of the same session.

Reads DIR/variants.txt (tests/gpu/fa2bwd_variants' output) and
DIR/flash-backward.json (peers/torch_sdpa.py --backward --backends flash), as
device_run.sh's fa2bwd_vs_flash step writes them, and prints each variant's
median time over flash's median on every (d, N, mask) both timed: below 1.000
the variant is faster.

usage: variants_vs_flash.py DIR
"""
import json
import re
import sys

if len(sys.argv) != 2:
    sys.exit(__doc__.strip().splitlines()[-1])
d = sys.argv[1]
flash={}
rep=json.load(open(d+'/flash-backward.json'))
for r in rep['results']:
    key=(r['head_dim'],r['seq_len'],int(bool(r['causal'])))
    flash[key]=r['timing']['median_ms']
rows={}
for line in open(d+'/variants.txt'):
    f=line.split()
    if len(f)>6 and re.match(r'^2d_',f[0]) and f[1].isdigit():
        rows.setdefault(f[0],{})[(int(f[3]),int(f[1]),int(f[2]))]=float(f[5])
keys=sorted(flash)
print('variant ÷ flash time'.ljust(28),' '.join(f"d{k[0]}N{k[1]//1024}K{'c' if k[2] else ''}".rjust(9) for k in keys))
print('flash ms'.ljust(28),' '.join(f"{flash[k]:9.4f}" for k in keys))
for v,m in sorted(rows.items()):
    print(v.ljust(28),' '.join((f"{m[k]/flash[k]:9.3f}" if k in m else ' '*9) for k in keys))
