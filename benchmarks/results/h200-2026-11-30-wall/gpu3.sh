#!/usr/bin/env bash
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch,triton,textual;print('torch',torch.__version__,'triton',triton.__version__,'textual',textual.__version__)"; date -u) > $OUT/env.txt 2>&1
t0=$(date +%s)
timeout 140 python3 benchmarks/truth.py --out /tmp/truth.json --budget-s 85 --no-ncu --chains add_relu,mul_add_tanh,mul_add_sigmoid_bf16,layer_norm_bf16,sum > /tmp/truth.txt 2>/tmp/truth.log; echo "truth rc=$? $(( $(date +%s)-t0 ))s"
FAILLOG=/tmp/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout 60 python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests/test_engine_gpu.py -k long_lived > /tmp/pytest.txt 2>&1; echo "test rc=$? $(( $(date +%s)-t0 ))s"
timeout 140 bash tests/data/record_gpu.sh /tmp/rec > /tmp/rec.log 2>&1; echo "rec rc=$? $(( $(date +%s)-t0 ))s"
export KERNEL_TUI_STATE_DIR=$(mktemp -d); mkdir -p /tmp/shots
timeout 50 python3 -m tui.screenshot /tmp/shots/gpu_main.svg --rerun -- "(a + b).relu()" --device cuda > /tmp/shots.log 2>&1; echo "shot main rc=$? $(( $(date +%s)-t0 ))s"
timeout 60 python3 -m tui.screenshot /tmp/shots/gpu_sweep.svg --sweep -- "(a + b).relu()" --device cuda >> /tmp/shots.log 2>&1; echo "shot sweep rc=$? $(( $(date +%s)-t0 ))s"
timeout $(( 585 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --only edit,quit --edits 5 --out /tmp/latency.json > /tmp/latency.txt 2>/tmp/latency.log; echo "latency rc=$? $(( $(date +%s)-t0 ))s"
cd /tmp && tar czf $OUT/bundle.tgz truth.json truth.txt truth.log gpu_tests.txt pytest.txt rec rec.log shots shots.log latency.json latency.txt latency.log 2>/dev/null; cd - >/dev/null
tail -3 /tmp/pytest.txt; cat /tmp/latency.txt; tail -12 /tmp/truth.txt; grep -c "wall" /tmp/truth.txt
