#!/usr/bin/env bash
# session 23, call C: this tree (events read with fewer calls and each name demangled once; the memory guard reads free memory once; the next compile's torch.compile wrapper made while idle): every GPU-marked test, the events and memory-guard tests, the latency benchmark's edit round (the device time left allowed no more)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton, textual; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'textual', textual.__version__)"; nproc; uptime; sha1sum probes/profile_events.py probes/memory_guard.py probes/compiling.py probes/worker.py probes/timing.py probes/measure.py tui/app.py; } > $OUT/s23C_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests > $OUT/s23C_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s23C_pytest.txt; grep -E "^E  |^FAILED" $OUT/s23C_pytest.txt | head -8 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout 200 python3 benchmarks/tui_latency.py --device cuda --edits 20 --only edit --out $OUT/s23C_latency.json > $OUT/s23C_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s23C_latency.txt
PYTHONPATH=/tmp/site:$PWD timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_profile_events.py tests/test_memory_guard.py -k "not (cpu_session and compiled)" > $OUT/s23C_pytest_events.txt 2>&1
echo "pytest events rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s23C_pytest_events.txt; grep -E "^E  |^FAILED" $OUT/s23C_pytest_events.txt | head -8 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout 60 python3 lab/s23/read_events_ab.py lab/s23/pe_old.py cuda > $OUT/s23C_read_events.txt 2>&1
echo "read events rc=$?"; grep -v "Warn\|USDT" $OUT/s23C_read_events.txt | tail -2
