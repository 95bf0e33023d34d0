#!/usr/bin/env bash
# session 24, call A: the committed tree 784a250 (TEARDOWN_CUPTI at probes' import again): every GPU-marked test, then the whole latency benchmark
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton, textual; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'textual', textual.__version__)"; nproc; uptime; sha1sum probes/__init__.py probes/profile_events.py probes/memory_guard.py probes/compiling.py probes/worker.py probes/timing.py probes/measure.py tui/app.py; } > $OUT/s24A_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 210 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests > $OUT/s24A_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s24A_pytest.txt; grep -E "^E  |^FAILED|^ERROR" $OUT/s24A_pytest.txt | head -8 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout 300 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/s24A_latency.json > $OUT/s24A_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s24A_latency.txt
