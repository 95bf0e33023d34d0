#!/usr/bin/env bash
# session 3, call 8: is the host-bound 43-or-70 us split the process's CPU placement?
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
t0=$(date +%s)
bdf=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed 's/^0000//; s/^/0000/')
dev=/sys/bus/pci/devices/${bdf#0000}
[ -d "$dev" ] || dev=/sys/bus/pci/devices/$(echo $bdf | sed 's/^00000000/0000/')
{ echo "bdf $bdf"; cat $dev/numa_node $dev/local_cpulist 2>&1; nproc; lscpu | grep -i "numa\|socket\|model name"; } > $OUT/topo.txt
cat $OUT/topo.txt
local=$(cat $dev/local_cpulist 2>/dev/null)
for i in 1 2 3; do
  [ -n "$local" ] && timeout 40 taskset -c $local python3 lab/numa_probe.py local 2>/dev/null >> $OUT/numa.jsonl
  timeout 40 python3 lab/numa_probe.py any 2>/dev/null >> $OUT/numa.jsonl
  [ $(( $(date +%s)-t0 )) -gt 110 ] && break
done
cat $OUT/numa.jsonl
