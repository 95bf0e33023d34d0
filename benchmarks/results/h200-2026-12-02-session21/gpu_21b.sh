#!/usr/bin/env bash
# session 21, call B (the final tree): every GPU-marked test, then the CPU light-range tests and the
# caller's-torch test under this box's torch 2.11, with time for a fresh process's compile pool
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton, textual; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'textual', textual.__version__)"; nproc; uptime; sha1sum probes/cpu_kernel_record.py probes/compiling.py; } > $OUT/s21B_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 240 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests > $OUT/s21B_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/s21B_pytest.txt; grep -E "^E  |^FAILED" $OUT/s21B_pytest.txt | head -8 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout $(( 580 - ($(date +%s)-t0) )) python3 -m pytest -q -p no:cacheprovider --durations=5 tests/test_cpu_kernel_record.py tests/test_engine_truth.py -k "light_range or left_as or only_the or untouched" > $OUT/s21B_pytest_cpu_record.txt 2>&1
echo "pytest cpu record rc=$? $(( $(date +%s)-t0 ))s"; tail -12 $OUT/s21B_pytest_cpu_record.txt; grep -E "^E  |^FAILED" $OUT/s21B_pytest_cpu_record.txt | head -8 | cut -c1-400
