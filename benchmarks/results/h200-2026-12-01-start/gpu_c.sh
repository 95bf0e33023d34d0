#!/usr/bin/env bash
set -u
unset PYTHONDONTWRITEBYTECODE
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD PYTHONPYCACHEPREFIX=/root/.cache/kernel-tui/bytecode
F='warn|_conversion|USDT|numpy'
python3 -c "import torch" 2>/dev/null
for i in 1 2 3; do echo "== startup2 $i"; python3 lab/startup2.py 2>&1 | grep -Eiv "$F"; done > $OUT/startup2.txt
cat $OUT/startup2.txt
python3 -X importtime -c "import torch" 2> $OUT/importtime.txt
sort -t'|' -k2 -n -r $OUT/importtime.txt | head -25
