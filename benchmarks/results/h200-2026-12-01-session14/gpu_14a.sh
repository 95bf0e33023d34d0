#!/usr/bin/env bash
# session 14, call A: every GPU-marked test; the new back-to-back test against the previous
# probes/timing.py (it must fail there); the profiler probes; the GPU screenshots.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/callA_env.txt 2>&1
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/callA_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -n 3 $OUT/callA_pytest.txt
rm -rf /tmp/before && mkdir /tmp/before && cp -r probes tests pyproject.toml /tmp/before/ && cp lab/gpu/timing_before.py /tmp/before/probes/timing.py
( cd /tmp/before && PYTHONPATH=/tmp/site:/tmp/before timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_engine_gpu.py -k back_to_back ) > $OUT/callA_before.txt 2>&1
echo "before rc=$? $(( $(date +%s)-t0 ))s"; tail -n 2 $OUT/callA_before.txt
( timeout 60 python3 lab/gpu/standby_probe.py; timeout 60 python3 lab/gpu/standby_probe2.py ) 2>&1 | grep -v Warning > $OUT/callA_profiler_probes.txt
echo "probes $(( $(date +%s)-t0 ))s"
timeout 200 bash screenshots/capture.sh cuda /tmp/shots > $OUT/callA_screenshots.log 2>&1
tar czf $OUT/callA_screenshots.tgz -C /tmp/shots . ; ls /tmp/shots | wc -l
echo "shots $(( $(date +%s)-t0 ))s"
