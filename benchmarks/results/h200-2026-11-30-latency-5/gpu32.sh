#!/usr/bin/env bash
# session 5, call 2: which pair test hung on the box (faulthandler), first frame with and without
# the compile worker (A/B in one call), every GPU-marked test
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; git log --oneline -1 2>/dev/null; } > $OUT/call2_env.txt 2>&1
timeout 150 python3 -m pytest -v -x -p no:cacheprovider -o faulthandler_timeout=45 tests/test_worker_pair.py > $OUT/call2_pair_tests.txt 2>&1
echo "pair tests rc=$? $(( $(date +%s)-t0 ))s"; grep -E "PASS|FAIL|Timeout|File \"/|^E " $OUT/call2_pair_tests.txt | head -40
for w in 0 1; do
  KERNEL_TUI_COMPILE_WORKER=$w timeout 100 python3 benchmarks/tui_latency.py --device cuda --only frame --out $OUT/call2_frame_cw$w.json > $OUT/call2_frame_cw$w.txt 2>&1
  echo "frame cw=$w rc=$? $(( $(date +%s)-t0 ))s"; head -3 $OUT/call2_frame_cw$w.txt
done
FAILLOG=$OUT/call2_gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout $(( 590 - ($(date +%s)-t0) )) python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests > $OUT/call2_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/call2_pytest.txt
