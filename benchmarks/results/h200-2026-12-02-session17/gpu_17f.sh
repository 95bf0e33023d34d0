#!/usr/bin/env bash
# session 17, call F (the tree of HEAD: a same-height text repainted without a layout): the app's
# GPU-marked tests, then the edit round with every process's events
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $OUT/s17F_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 80 python3 -m pytest -q -p no:cacheprovider -m gpu tests/tui/test_features_gpu.py > $OUT/s17F_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s17F_pytest.txt; grep -E "^E  " $OUT/s17F_pytest.txt | head -5 | cut -c1-300
TIMELINE_FILE=$OUT/s17F_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 100 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s17F_edit.json > $OUT/s17F_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; grep "chain by chain\|new_eager\|new_compiled \|hit_" $OUT/s17F_edit.txt
{ PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s17F_timeline.tsv; PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s17F_timeline.tsv --compiled; } > $OUT/s17F_phases.txt 2>&1
grep median $OUT/s17F_phases.txt
