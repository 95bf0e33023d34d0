#!/usr/bin/env bash
# session 5, call 4 (tree of 4de0cdb): first frame and first eager rows with torch's modules
# imported from bytecode, as pip leaves an installed torch (compiled once into PYTHONPYCACHEPREFIX)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
SITE=$(python3 -c "import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))")
{ date -u; echo "site-packages: $SITE"; python3 -c "import sys; print(sys.version)"; } > $OUT/call4_env.txt
export PYTHONPYCACHEPREFIX=/tmp/pyc
timeout 150 python3 -m compileall -q -j 0 "$SITE" /tmp/site > $OUT/call4_compileall.txt 2>&1
echo "compileall rc=$? $(( $(date +%s)-t0 ))s $(find /tmp/pyc -name '*.pyc' | wc -l) files" | tee -a $OUT/call4_env.txt
for i in 1 2 3; do /usr/bin/time -f "import torch, torch._dynamo: %e s" python3 -c "import torch, torch._dynamo" 2>> $OUT/call4_env.txt; done
env -u PYTHONPYCACHEPREFIX /usr/bin/time -f "without the bytecode: import torch, torch._dynamo: %e s" python3 -c "import torch, torch._dynamo" 2>> $OUT/call4_env.txt
tail -4 $OUT/call4_env.txt
timeout 120 python3 benchmarks/tui_latency.py --device cuda --only frame --out $OUT/call4_frame_bytecode.json > $OUT/call4_frame_bytecode.txt 2>&1
echo "frame rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call4_frame_bytecode.txt
