"""Launch -> first frame, in turns: the app of another tree (argv[1]) and of this one; 120x40 tmux."""
import statistics, sys, tempfile, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
from tui_latency import ROOT, Terminal, alive
from pathlib import Path
CHAIN = "(a + b).relu()"
trees = {"old": Path(sys.argv[1]), "new": ROOT}
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 8
got = {k: [] for k in trees}
for r in range(rounds + 1):
    for name, root in (list(trees.items()) if r % 2 else list(trees.items())[::-1]):
        term = Terminal([sys.executable, "-m", "tui", CHAIN, "--device", "cpu"], width=120, height=40,
                        env={"KERNEL_TUI_STATE_DIR": tempfile.mkdtemp(), "PYTHONPATH": str(root)}, cwd=root)
        try:
            term.wait_for(CHAIN, timeout=30, what="the first frame")
            took = time.monotonic() - term.started_at
            processes = [term.pid, *term.descendants()]
        finally:
            term.close()
        deadline = time.monotonic() + 15
        while any(alive(pid) for pid in processes) and time.monotonic() < deadline:
            time.sleep(0.05)
        if r:
            got[name].append(took)
for name, v in got.items():
    print(f"{name}: first frame median {1000*statistics.median(v):.0f} ms (p25-p75 {1000*statistics.quantiles(v,n=4)[0]:.0f}-{1000*statistics.quantiles(v,n=4)[2]:.0f}), n={len(v)}")
