#!/usr/bin/env bash
# call 10, the final tree (a cancel during the compiler's import: the client waits for its end): every GPU-marked test
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ date -u; git log --oneline -1; } > $OUT/call10_env.txt
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests -s > $OUT/call10_pytest.txt 2>&1
echo "tests rc=$?"; grep -E "stopped|passed|failed" $OUT/call10_pytest.txt | tail -n 5
