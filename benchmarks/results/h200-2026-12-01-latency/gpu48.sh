#!/usr/bin/env bash
# session 6, call 8 (the final tree): every GPU-marked test
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/call8_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/call8_pytest.txt
