#!/usr/bin/env bash
# call 1 of this session: where a request's time goes on the H200 (teardown on and off)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/env.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" >> $OUT/env.txt
nproc >> $OUT/env.txt
for td in 1 0; do
  TEARDOWN_CUPTI=$td timeout 150 python3 lab/phases.py cuda 1e6 2>$OUT/phases_err$td.txt | grep '^{' > $OUT/phases_teardown$td.jsonl
  echo "teardown $td rc=$?"
done
