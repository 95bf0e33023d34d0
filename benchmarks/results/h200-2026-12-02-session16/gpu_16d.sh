#!/usr/bin/env bash
# session 16, call D: the roofline GPU test on 2440377, rows printed whole on failure
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1
d=$PWD/lab/t_new
(cd $d && PYTHONPATH=/tmp/site:$d timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/tui/test_features_gpu.py -k training > $OUT/callD_train.txt 2>&1)
grep -E "^E  " $OUT/callD_train.txt | head -2 | tr ')' '\n' 
