python3 lab/cpu_speed.py > $OUT/cpu_speed.json; cat $OUT/cpu_speed.json; nproc; grep -m1 "model name" /proc/cpuinfo
