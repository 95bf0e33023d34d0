#!/usr/bin/env bash
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch,triton,textual;print('torch',torch.__version__,'triton',triton.__version__,'textual',textual.__version__)"; date -u; git log -1 --format=%H) > $OUT/env.txt 2>&1
t0=$(date +%s)
timeout 150 python3 lab/taint2.py > $OUT/taint2.jsonl 2>/tmp/taint2.err; echo "taint rc=$? $(( $(date +%s)-t0 ))s"
timeout 290 python3 benchmarks/truth.py --out $OUT/truth.json --budget-s 240 > $OUT/truth.txt 2>$OUT/truth.log; echo "truth rc=$? $(( $(date +%s)-t0 ))s"
FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout $(( 585 - ($(date +%s)-t0) )) python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests/test_engine_gpu.py tests/test_faults_gpu.py tests/test_soak.py tests/tui/test_features_gpu.py > /tmp/pytest.txt 2>&1; echo "tests rc=$? $(( $(date +%s)-t0 ))s"
tail -5 /tmp/pytest.txt; tail -3 /tmp/taint2.err
cat $OUT/taint2.jsonl; tail -25 $OUT/truth.txt; grep -c " passed" $OUT/gpu_tests.txt; grep " failed" $OUT/gpu_tests.txt
