#!/usr/bin/env bash
# session 22, call A: where a fresh process's first CPU compile on the GPU box spends ~117 s, and why it does not exit
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
R=$OUT/s22A_hang.txt
{ date -u; nproc; g++ --version | head -1; python3 -c "import torch;print(torch.__version__)"; ls -la /tmp/torchinductor_root/precompiled_headers 2>&1 | head; sha1sum probes/*.py | sha1sum; } > $R 2>&1
run_one() {  # $1 tag, $2 chain
  echo "=== $1: $2" >> $R
  t0=$(date +%s)
  timeout 220 python3 lab/s22/hang_script.py "$2" > /tmp/h_$1.txt 2>&1 &
  local tp=$!
  sleep 2; local pid=$(pgrep -f "hang_script.py" | head -1)
  for probe in 15 45 90; do
    while [ $(( $(date +%s)-t0 )) -lt $probe ]; do sleep 1; grep -q "^done" /tmp/h_$1.txt && break; done
    grep -q "^done" /tmp/h_$1.txt && break
    echo "--- at $(( $(date +%s)-t0 ))s: processes" >> $R
    ps -eo pid,ppid,etimes,pcpu,rss,args --forest | grep -v "ps -eo" | grep -A30 "hang_script" | cut -c1-400 >> $R
    ./lab/py-spy dump --native --pid $pid >> $R 2>&1 || echo "py-spy failed" >> $R
  done
  while ! grep -q "^done" /tmp/h_$1.txt && kill -0 $tp 2>/dev/null; do sleep 1; done
  sleep 8
  if kill -0 $tp 2>/dev/null; then
    echo "--- still alive 8 s after done" >> $R
    for t in /proc/$pid/task/*; do echo "$(cat $t/comm) wchan=$(cat $t/wchan 2>/dev/null)"; done >> $R 2>&1
    ./lab/py-spy dump --native --pid $pid >> $R 2>&1 || echo "py-spy failed" >> $R
    ps -eo pid,ppid,etimes,args --forest | grep -A10 "hang_script" | cut -c1-300 >> $R
    kill -9 $pid; 
  fi
  wait $tp; echo "rc=$? after $(( $(date +%s)-t0 ))s" >> $R
  cat /tmp/h_$1.txt | grep -v Warning | head -40 >> $R
}
run_one first "F.softmax(a) + 1"
ls -la /tmp/torchinductor_root/precompiled_headers >> $R 2>&1
run_one second "(a * b).tanh()"
{ echo "=== CLI cpu"; t0=$(date +%s%N); timeout 120 python3 -m tui profile "(a + b).sin()" --device cpu --modes eager,compiled --sizes 1e4 2>&1 | tail -5; echo "rc=$? $(( ($(date +%s%N)-t0)/1000000 )) ms"; 
  echo "=== CLI cuda"; t0=$(date +%s%N); timeout 120 python3 -m tui profile "(a + b).sin()" --modes eager,compiled --sizes 1e6 2>&1 | tail -5; echo "rc=$? $(( ($(date +%s%N)-t0)/1000000 )) ms"; } >> $R 2>&1
cat $R | cut -c1-300 | head -150
