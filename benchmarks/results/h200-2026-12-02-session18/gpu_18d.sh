#!/usr/bin/env bash
# session 18, call D (the tool's reading of a session puts runtime calls on their ops' threads and orders events by start, as torch's): every GPU-marked test
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/s18D_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/s18D_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/s18D_pytest.txt; grep -E "^E  |^FAILED" $OUT/s18D_pytest.txt | head -8 | cut -c1-500
