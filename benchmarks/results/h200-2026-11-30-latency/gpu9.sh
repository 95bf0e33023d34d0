#!/usr/bin/env bash
# call 4: every GPU-marked test, the compile A/B, then the README's H200 screenshots
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout 290 python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests > $OUT/pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/pytest.txt
timeout 60 python3 lab/ab_compile.py cuda 1e6 2>/dev/null | grep '^{' > $OUT/ab_compile.jsonl
echo "ab $(( $(date +%s)-t0 ))s"; cat $OUT/ab_compile.jsonl
mkdir -p /tmp/shots
timeout $(( 580 - ($(date +%s)-t0) )) bash screenshots/capture.sh cuda /tmp/shots > /tmp/shots.log 2>&1
echo "shots rc=$? $(( $(date +%s)-t0 ))s"; ls /tmp/shots; tail -3 /tmp/shots.log
cd /tmp && tar czf $OUT/shots.tgz shots shots.log
