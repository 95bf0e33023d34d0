#!/usr/bin/env bash
# session 16, call A: every GPU-marked test, then the edit round (20 new chains beside bare
# compiles in turns) with every process's events (benchmarks/timeline)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; git log -1 --format='%h %s' 2>/dev/null; } > $OUT/callA_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 260 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/callA_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/callA_pytest.txt
TIMELINE_FILE=$OUT/callA_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 200 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/callA_edit.json > $OUT/callA_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callA_edit.txt
PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/callA_timeline.tsv > $OUT/callA_phases.txt 2>&1
PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/callA_timeline.tsv --compiled >> $OUT/callA_phases.txt 2>&1
tail -3 $OUT/callA_phases.txt; grep -c . $OUT/callA_timeline.tsv
grep -P '\tprofiler\t' $OUT/callA_timeline.tsv | tail -5
