#!/usr/bin/env bash
# session 6, call 2: where the worker's start goes (with bytecode), and whether the CUDA context and
# torch._dynamo's import overlap in two threads; where a new chain's eager request spends its time
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD PYTHONPYCACHEPREFIX=/tmp/pyc
t0=$(date +%s)
SITE=$(python3 -c "import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))")
timeout 150 python3 -m compileall -q -j 0 "$SITE/torch" "$SITE/sympy" "$SITE/triton" /tmp/site probes tui > /dev/null 2>&1
echo "compileall $(( $(date +%s)-t0 ))s"
python3 lab/start_phases.py seq > /dev/null 2>&1
for r in 1 2 3; do for m in seq bg-cuda bg-dynamo; do python3 lab/start_phases.py $m 2>/dev/null; done; done | tee $OUT/call2_phases.txt
python3 lab/start_phases.py seq prof > $OUT/call2_new_eager_profile.txt 2>&1
head -60 $OUT/call2_new_eager_profile.txt
echo "all $(( $(date +%s)-t0 ))s"
