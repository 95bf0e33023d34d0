#!/usr/bin/env bash
# session 19, call E (b8b8a53: the tables' change and the diagnostics' logger list): every GPU-marked test, the whole latency
# benchmark, then the edit round with every process's events
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton, textual; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'textual', textual.__version__)"; nproc; uptime; } > $OUT/s19E_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/s19E_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s19E_pytest.txt; grep -E "^E  |^FAILED" $OUT/s19E_pytest.txt | head -8 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout 220 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/s19E_latency.json > $OUT/s19E_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s19E_latency.txt
TIMELINE_FILE=$OUT/s19E_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 100 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s19E_edit.json > $OUT/s19E_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; grep "chain by chain\|new_eager\|new_compiled \|hit_" $OUT/s19E_edit.txt
{ PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s19E_timeline.tsv; PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s19E_timeline.tsv --compiled; } > $OUT/s19E_phases.txt 2>&1
grep median $OUT/s19E_phases.txt
