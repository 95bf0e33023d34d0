#!/usr/bin/env bash
# session 4, call 2: new eager rows 226 ms in call 1 against 182 ms in the last session's call 3:
# the edit round of this code, of call 3's code (a56cc3e, lab/old) and of this code at 60 fps, in one run;
# then the split probe with its errors kept
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env.txt
run() {  # name, tree, extra env
  ( cd $2 && env PYTHONPATH=/tmp/site:$PWD $3 timeout 150 python3 benchmarks/tui_latency.py --device cuda --edits 8 --only edit --out $OUT/ab_$1.json > /tmp/ab_$1.txt 2>&1 )
  echo "$1 rc=$? $(( $(date +%s)-t0 ))s: $(grep -E 'new_eager|hit_eager|new_compiled' /tmp/ab_$1.txt | tr -s ' ' | tr '\n' ';')" | tee -a $OUT/ab.txt
}
run new1 $PWD ""
run old1 $PWD/lab/old ""
run new60 $PWD "TEXTUAL_FPS=60"
run old2 $PWD/lab/old ""
run new2 $PWD ""
for i in 1 2 3; do
  [ $(( $(date +%s)-t0 )) -gt 480 ] && break
  PYTHONPATH=/tmp/site:$PWD timeout 60 python3 lab/split_probe.py >> $OUT/split.jsonl 2>> $OUT/split_err.txt
  echo "split $i rc=$? $(( $(date +%s)-t0 ))s"
done
cat $OUT/split.jsonl; tail -5 $OUT/split_err.txt
