#!/usr/bin/env bash
# call 9, the final tree (a stop during the compiler's import taken as it ends): every GPU-marked test
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ date -u; git log --oneline -1; } > $OUT/call9_env.txt
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests -s > $OUT/call9_pytest.txt 2>&1
echo "tests rc=$?"; grep -E "stopped|passed|failed" $OUT/call9_pytest.txt | tail -n 5
