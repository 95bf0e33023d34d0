#!/usr/bin/env bash
# session 18, call C (9beae1e: an edit goes to the app at once; a session's events read by the tool): every GPU-marked test, the whole latency benchmark, then
# the edit round with every process's events
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; git log --oneline -1; } > $OUT/s18C_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 260 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/s18C_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/s18C_pytest.txt; grep -E "^E  " $OUT/s18C_pytest.txt | head -5 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout 220 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/s18C_latency.json > $OUT/s18C_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s18C_latency.txt
TIMELINE_FILE=$OUT/s18C_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 100 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s18C_edit.json > $OUT/s18C_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; grep "chain by chain\|new_eager\|new_compiled " $OUT/s18C_edit.txt
{ PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s18C_timeline.tsv; PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s18C_timeline.tsv --compiled; } > $OUT/s18C_phases.txt 2>&1
grep median $OUT/s18C_phases.txt
