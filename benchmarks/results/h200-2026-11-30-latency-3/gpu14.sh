#!/usr/bin/env bash
# session 3, call 2: why compiles inside requests are slower; is the box's torch importing without .pyc
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'triton', triton.__version__, torch.__file__, 'dont_write_bytecode', sys.flags.dont_write_bytecode)"; env | grep -i PYTHON; } > $OUT/env.txt
td=$(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))")
{ echo "torch dir $td"; ls -ld $td $td/__pycache__ 2>&1; ls $td/__pycache__ 2>&1 | head -3; ls $td/_dynamo/__pycache__ 2>&1 | wc -l; touch $td/.w 2>&1 && echo writable && rm $td/.w; } >> $OUT/env.txt
for i in 1 2; do /usr/bin/time -f "import torch+_dynamo default: %e s" python3 -c "import torch, torch._dynamo" 2>>$OUT/env.txt; done
for i in 1 2 3; do PYTHONPYCACHEPREFIX=/tmp/pyc /usr/bin/time -f "import torch+_dynamo pycache prefix run $i: %e s" python3 -c "import torch, torch._dynamo" 2>>$OUT/env.txt; done
cat $OUT/env.txt
echo "imports $(( $(date +%s)-t0 ))s"
timeout 200 python3 lab/compile_factors.py cuda 5 > $OUT/compile_factors.jsonl 2>/dev/null
echo "factors $(( $(date +%s)-t0 ))s"; cat $OUT/compile_factors.jsonl
timeout 200 python3 lab/compile_ab2.py cuda > $OUT/compile_ab2.jsonl 2>/dev/null
echo "ab2 $(( $(date +%s)-t0 ))s"; cat $OUT/compile_ab2.jsonl
