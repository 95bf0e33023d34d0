#!/usr/bin/env bash
# session 22, call B: the whole latency benchmark on this tree (a GPU's warm-up skipped after another
# process's timed reps), every GPU-marked test, the warm-up tests under this box's torch
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton, textual; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'textual', textual.__version__)"; nproc; uptime; sha1sum probes/timing.py probes/device_lock.py probes/measure.py tui/app.py; } > $OUT/s22B_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 280 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/s22B_latency.json > $OUT/s22B_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s22B_latency.txt
PYTHONPATH=/tmp/site:$PWD timeout 220 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests > $OUT/s22B_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s22B_pytest.txt; grep -E "^E  |^FAILED" $OUT/s22B_pytest.txt | head -8 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_device_lock.py tests/test_engine_truth.py -k "warm or held or device" > $OUT/s22B_pytest_warm.txt 2>&1
echo "pytest warm rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s22B_pytest_warm.txt; grep -E "^E  |^FAILED" $OUT/s22B_pytest_warm.txt | head -8 | cut -c1-400
