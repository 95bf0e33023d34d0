#!/usr/bin/env bash
# call 5: the compute peak measured at full clocks: roofline tests and screenshots again
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD KERNEL_TUI_STATE_DIR=$(mktemp -d)
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
python3 -c "
import torch, json
from probes.compute_peak import measure_compute_peak
for dtype in ('bf16', 'fp32'):
    for i in range(2):
        p = measure_compute_peak(torch.device('cuda'), dtype); print(json.dumps({'dtype': dtype, 'tflops': round(p.value, 1), 'iqr': [round(x, 1) for x in p.iqr], 'busy': p.busy}))
" > $OUT/compute_peak.jsonl 2>/dev/null; cat $OUT/compute_peak.jsonl
FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout 100 python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests/tui/test_features_gpu.py tests/test_engine_gpu.py -k "roofline or train or flop or backward" > $OUT/pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/pytest.txt
train="x: [N, 4096] bf16
w: [4096, 4096] bf16
F.gelu(x @ w)"
for shot in roofline grad; do
  keys=escape,b,f; [ $shot = grad ] && keys=escape,b
  timeout 60 python3 -m tui.screenshot $OUT/gpu_$shot.svg --keys $keys -- "$train" --workspace $(mktemp -d)/ws.json --device cuda --n 4096 >> $OUT/shots.log 2>&1
  echo "shot $shot rc=$? $(( $(date +%s)-t0 ))s"
done
timeout 60 python3 -m tui.screenshot $OUT/gpu_roofline_80x24.svg --size 80x24 --keys escape,b,f -- "$train" --workspace $(mktemp -d)/ws.json --device cuda --n 4096 >> $OUT/shots.log 2>&1
echo "shot 80x24 rc=$? $(( $(date +%s)-t0 ))s"
