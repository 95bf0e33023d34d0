#!/usr/bin/env bash
# session 21, call C: why a fresh process's CPU compile (the caller's-torch test's script) ran past 300 s here
set -u
[ -d /tmp/site ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1
mkdir -p /tmp/old && git archive 67d3d4f | tar -x -C /tmp/old
cp lab/s21/untouched_script.py /tmp/untouched_script.py
( cd /tmp/old && TORCHINDUCTOR_CACHE_DIR=/tmp/ic_old PYTHONPATH=/tmp/site:/tmp/old timeout 200 python3 /tmp/untouched_script.py 150 > $OUT/s21C_old_default.txt 2>&1; echo "rc=$?" >> $OUT/s21C_old_default.txt ) &
( TORCHINDUCTOR_CACHE_DIR=/tmp/ic_one TORCHINDUCTOR_COMPILE_THREADS=1 PYTHONPATH=/tmp/site:$PWD timeout 200 python3 /tmp/untouched_script.py 150 > $OUT/s21C_new_one_thread.txt 2>&1; echo "rc=$?" >> $OUT/s21C_new_one_thread.txt ) &
( PYTHONPATH=/tmp/site:$PWD timeout 200 python3 /tmp/untouched_script.py 150 > $OUT/s21C_new_default.txt 2>&1; echo "rc=$?" >> $OUT/s21C_new_default.txt ) &
wait
for f in $OUT/s21C_*.txt; do echo "== $f"; grep -v "^  File\|^    " $f | head -12; grep -m3 -B2 -A12 "most recent call first" $f | grep "File" | head -14; done
