#!/usr/bin/env bash
# session 6, call 1 (tree of 8ce8514: the bytecode cache, kill-first quit): the whole latency
# benchmark, where torch's import time goes with the cache, then every GPU-marked test
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call1_env.txt 2>&1
timeout 330 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call1_latency.json > $OUT/call1_latency.txt 2>$OUT/call1_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call1_latency.txt; tail -3 $OUT/call1_latency.log
C=$(python3 -c "from probes.state_files import user_cache_dir; print(user_cache_dir())")
ls $C $C/bytecode | head; 
{ for i in 1 2; do /usr/bin/time -f "cache: import torch, torch._dynamo: %e s" env PYTHONPYCACHEPREFIX=$C/bytecode python3 -c "import torch, torch._dynamo" ; done
  /usr/bin/time -f "cache: import torch: %e s" env PYTHONPYCACHEPREFIX=$C/bytecode python3 -c "import torch"
  /usr/bin/time -f "cache: python3 -c pass: %e s" env PYTHONPYCACHEPREFIX=$C/bytecode python3 -c "pass"
  /usr/bin/time -f "none: import torch, torch._dynamo: %e s" python3 -c "import torch, torch._dynamo"; } >> $OUT/call1_env.txt 2>&1
env PYTHONPYCACHEPREFIX=$C/bytecode python3 -X importtime -c "import torch, torch._dynamo" 2> /tmp/imp.txt
sort -t'|' -k2 -n -r /tmp/imp.txt | head -60 > $OUT/call1_importtime.txt
tail -6 $OUT/call1_env.txt
timeout $(( 560 - ($(date +%s)-t0) )) python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/call1_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/call1_pytest.txt
