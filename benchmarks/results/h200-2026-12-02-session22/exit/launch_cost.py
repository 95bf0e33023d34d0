"""Host time per launch of a 1-kernel op after (or without) a tool measurement on CUDA in this process."""
import os, statistics, sys, time
import torch
if sys.argv[1] != "fresh":
    from probes.protocol import ProfileRequest
    from probes.sweep import run_profile
    run_profile(ProfileRequest("t", "(a + b).relu()", sizes=[1000], modes=["eager"], device="cuda"), lambda e: None)
a = torch.randn(1000, device="cuda"); b = torch.randn(1000, device="cuda"); c = torch.empty_like(a)
for _ in range(2000):
    torch.add(a, b, out=c)
torch.cuda.synchronize()
per = []
for _ in range(15):
    t = time.perf_counter()
    for _ in range(1000):
        torch.add(a, b, out=c)
    torch.cuda.synchronize()
    per.append((time.perf_counter() - t) * 1000)
print(f"{sys.argv[1]}: TEARDOWN_CUPTI={os.environ.get('TEARDOWN_CUPTI', 'unset')} us per launch median {statistics.median(per):.2f} (min {min(per):.2f})", flush=True)
