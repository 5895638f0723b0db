#!/bin/bash
# Read-only probe of a GPU at its default power limit (nothing is changed): power draw, SM clock
# and clock-event reasons under a BF16 8192^3 GEMM loop and a 1 GiB HBM copy loop, 25 s each,
# sampled by nvidia-smi every 0.5 s. Its 2026-11-27 H100 SXM result is power-h100-2026-11-27.txt;
# catalog/calibration/training.toml (power caps) cites it. Needs PyTorch with CUDA. OUT: result folder.
OUT=${OUT:-.}
nvidia-smi -q -d POWER,PERFORMANCE > $OUT/env.txt 2>&1; python3 -c 'import torch;print(torch.__version__)' >> $OUT/env.txt 2>&1
cat > /tmp/l.py <<'P'
import sys,time,torch
k,s=sys.argv[1],float(sys.argv[2])
if k=="gemm":
 n=8192;a=torch.randn(n,n,device="cuda",dtype=torch.bfloat16);b=torch.randn(n,n,device="cuda",dtype=torch.bfloat16);f=lambda:a@b;w=2*n**3
else:
 a=torch.empty(2**30,device="cuda",dtype=torch.uint8);b=torch.empty_like(a);f=lambda:b.copy_(a);w=2*2**30
for _ in range(10):f()
torch.cuda.synchronize();t=time.time();i=0
while time.time()-t<s:
 for _ in range(20):f()
 torch.cuda.synchronize();i+=20
print(k,i*w/(time.time()-t)/1e12)
P
for k in gemm copy; do nvidia-smi --query-gpu=power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu,clocks_throttle_reasons.active,clocks_throttle_reasons.sw_power_cap,clocks_throttle_reasons.hw_slowdown,clocks_throttle_reasons.sw_thermal_slowdown --format=csv -lms 500 > $OUT/smi_$k.csv 2>&1 & p=$!; timeout 60 python3 /tmp/l.py $k 25 > $OUT/load_$k.txt 2>&1; kill $p; sleep 2; done
cat $OUT/load_*.txt; grep -i "limit\|torch\|version" $OUT/env.txt | head; for k in gemm copy; do awk -F, -v k=$k 'NR>1 && $1+0>200{p+=$1; c+=$3; n++} END{printf "%s: %d samples, mean %.0f W, mean SM clock %.0f MHz\n", k, n, p/n, c/n}' $OUT/smi_$k.csv; done
