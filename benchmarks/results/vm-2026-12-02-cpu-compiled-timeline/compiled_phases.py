"""Where a new chain's compiled rows go on the CPU (one worker): ms after the last key of each
edit to each step, from a timeline that benchmarks/timeline/sitecustomize.py wrote.

    python compiled_phases.py timeline.tsv
"""
import sys, statistics
rows=[l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
rows=sorted((float(t),int(p),e,d) for t,p,e,d in rows)
keys=[i for i,r in enumerate(rows) if r[2]=="lastkey"]
cols = {}
for k,i in enumerate(keys):
    end = keys[k+1] if k+1<len(keys) else len(rows)
    t0=rows[i][0]; ev=rows[i:end]
    def first(name, det=None, after=-1):
        for t,p,e,d in ev:
            if e==name and (det is None or det in d) and (t-t0)*1000>after: return (t-t0)*1000
    c0=first("compile>")
    if c0 is None: continue
    c1=first("compile<"); 
    d = dict(eager_rows_out=first("emit","MeasurementResult eager"), compile_start=c0, compile_end=c1,
             prepared=first("prepared",after=c1), reps=first("reps chosen",after=c1), bytes=first("bytes read",after=c1), profile_done=first("profile<",after=c1),
             rows_out=first("emit","MeasurementResult compiled"), app_recv=first("recv","MeasurementResult compiled"), rp_end=first("render_panes<",after=c1+1), seen=first("seen","compiled"))
    d["display"] = first("display", after=d["app_recv"] or 0)
    for a,b in d.items(): cols.setdefault(a,[]).append(b)
    print(" ".join(f"{a}={b:.0f}" if b is not None else f"{a}=-" for a,b in d.items()))
print("median", " ".join(f"{a}={statistics.median([x for x in v if x is not None]):.1f}" for a,v in cols.items()))
