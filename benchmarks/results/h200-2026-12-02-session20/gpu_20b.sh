#!/usr/bin/env bash
# session 20, call B (96f8935: border marks repaint their row only; the benchmark polls every 2 ms here):
# every GPU-marked test, the whole latency benchmark, the border A/B under the pilot
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton, textual; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'textual', textual.__version__)"; nproc; uptime; } > $OUT/s20B_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 230 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/s20B_latency.json > $OUT/s20B_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s20B_latency.txt
PYTHONPATH=/tmp/site:$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/s20B_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s20B_pytest.txt; grep -E "^E  |^FAILED" $OUT/s20B_pytest.txt | head -8 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout $(( 585 - ($(date +%s)-t0) )) python3 lab/border_ab.py 40 > $OUT/s20B_border_ab.txt 2>&1
echo "border rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/s20B_border_ab.txt
