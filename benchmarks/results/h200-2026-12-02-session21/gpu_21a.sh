#!/usr/bin/env bash
# session 21, call A (CPU kernels' light profiler range): the whole latency benchmark, every GPU-marked
# test, the light-range tests and the caller's-torch test under this box's torch, the compile A/B on its CPU
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton, textual; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'textual', textual.__version__)"; nproc; uptime; git log --oneline -1; } > $OUT/s21A_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 240 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/s21A_latency.json > $OUT/s21A_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s21A_latency.txt
PYTHONPATH=/tmp/site:$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests > $OUT/s21A_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s21A_pytest.txt; grep -E "^E  |^FAILED" $OUT/s21A_pytest.txt | head -8 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_cpu_kernel_record.py tests/test_engine_truth.py -k "light_range or left_as or untouched" > $OUT/s21A_pytest_cpu_record.txt 2>&1
echo "pytest cpu record rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s21A_pytest_cpu_record.txt; grep -E "^E  |^FAILED" $OUT/s21A_pytest_cpu_record.txt | head -8 | cut -c1-400
( echo "\$ python kernel_record_ab.py 6   ($(date -u +%F), the H200 box's CPU, torch $(python3 -c 'import torch;print(torch.__version__)' 2>/dev/null), $(git log --format=%h -1))"; PYTHONPATH=/tmp/site:$PWD timeout $(( 590 - ($(date +%s)-t0) )) python3 benchmarks/results/vm-2026-12-02-kernel-record/kernel_record_ab.py 6 2>&1 | grep -v "Warn\|_conversion_method\|USDT" ) > $OUT/s21A_kernel_record_ab.txt
echo "kr rc=$? $(( $(date +%s)-t0 ))s"; tail -7 $OUT/s21A_kernel_record_ab.txt
