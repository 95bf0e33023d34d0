#!/usr/bin/env bash
# session 4, call 3: the 43-or-70 us split (fresh processes: host, device and the engine's reading),
# the client's idle-worker replacement on a CUDA worker, and every GPU-marked test
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
for i in 1 2 3 4; do
  timeout 60 python3 lab/split_probe.py >> $OUT/split.jsonl 2>> /tmp/split_err.txt
  echo "split $i rc=$? $(( $(date +%s)-t0 ))s"
  [ $(( $(date +%s)-t0 )) -gt 150 ] && break
done
cat $OUT/split.jsonl; tail -3 /tmp/split_err.txt
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_worker.py -k "idle_worker or each_time or killed_mid or adopted" > $OUT/worker_tests.txt 2>&1
echo "worker tests rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/worker_tests.txt
FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout $(( 570 - ($(date +%s)-t0) )) python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests > $OUT/pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/pytest.txt
