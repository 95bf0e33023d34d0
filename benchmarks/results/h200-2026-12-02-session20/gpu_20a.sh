#!/usr/bin/env bash
# session 20, call A (f49fa63): Inductor's compile pool (torch's default, 16 threads here) against one thread
# (the app's setting): a new chain's compile bare and through the tool, then the app's edit round both ways
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; git log -1 --format='%h %s' 2>/dev/null | cut -c1-100; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton, textual; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'textual', textual.__version__)"; nproc; uptime; } > $OUT/s20A_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 200 python3 lab/threads_ab.py --ops 20 > $OUT/s20A_threads.txt 2>&1
echo "threads rc=$? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/s20A_threads.txt
TORCHINDUCTOR_COMPILE_THREADS=16 PYTHONPATH=/tmp/site:$PWD timeout 170 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s20A_edit_pool.json > $OUT/s20A_edit_pool.txt 2>/dev/null
echo "edit pool rc=$? $(( $(date +%s)-t0 ))s"; grep "chain by chain\|new_eager\|new_compiled \|hit_\|bare" $OUT/s20A_edit_pool.txt
PYTHONPATH=/tmp/site:$PWD timeout 170 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s20A_edit_one.json > $OUT/s20A_edit_one.txt 2>/dev/null
echo "edit one rc=$? $(( $(date +%s)-t0 ))s"; grep "chain by chain\|new_eager\|new_compiled \|hit_\|bare" $OUT/s20A_edit_one.txt
