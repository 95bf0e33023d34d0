#!/usr/bin/env bash
# session 19, call A (c24a48d, the last stop's final code): every GPU-marked test, then the tool's compile
# of new chains against a bare torch.compile + first call, in turns in one process (lab/compile_paths.py)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; } > $OUT/s19A_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/s19A_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/s19A_pytest.txt; grep -E "^E  |^FAILED" $OUT/s19A_pytest.txt | head -8 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout 200 python3 lab/compile_paths.py --device cuda --ops 20 --profile > $OUT/s19A_compile_paths.txt 2>&1
echo "compile_paths rc=$? $(( $(date +%s)-t0 ))s"; grep -E "median" $OUT/s19A_compile_paths.txt
