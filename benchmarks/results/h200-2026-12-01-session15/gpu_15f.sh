#!/usr/bin/env bash
# session 15, call F (the tree of the final code): every GPU-marked test; the frame section (7
# launches) with every process's events
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $OUT/callF_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 260 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/callF_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -n 2 $OUT/callF_pytest.txt
TIMELINE_FILE=$OUT/callF_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 150 python3 benchmarks/tui_latency.py --device cuda --only frame --launches 7 --out $OUT/callF_frame.json > $OUT/callF_frame.txt 2>/dev/null
echo "frame rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callF_frame.txt
python3 lab/gpu/start_summary.py $OUT/callF_timeline.tsv $PWD/benchmarks/timeline > $OUT/callF_start.txt 2>&1; cat $OUT/callF_start.txt
