"""Where the CPU kernel-profile setting's cost to a compile is: g++ on the source Inductor wrote
for (a + b).neg() * 11 at N=1e4 with `cpp.enable_kernel_profile` (as the tool compiles on the CPU),
with Inductor's own command line, in turns: the source as written (`profiled`), without the
record-function object (`header only`: its include kept), and without both (`plain`: what a
user's own compile builds). Then g++'s -ftime-report phases of `profiled`."""
import os, re, shlex, statistics, subprocess, sys, tempfile, time
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-gxx-")
import torch
import torch._inductor.config as cfg
from torch._inductor import cpp_builder

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
seen = {}
build = cpp_builder.CppBuilder.build


def spy(self):
    if self.get_target_file_path().endswith("main.so"):
        seen["command"] = self.get_command_line()
    return build(self)


cpp_builder.CppBuilder.build = spy
namespace = {}
exec("def f(a, b): return (a + b).neg() * 11", namespace)
with cfg.patch({"cpp.enable_kernel_profile": True}):
    torch.compile(namespace["f"])(torch.randn(10**4), torch.randn(10**4))
command = shlex.split(seen["command"])
source = next(arg for arg in command if arg.endswith(".main.cpp"))
text = open(source).read()
work = tempfile.mkdtemp(prefix="kt-gxx-src-")
variants = {
    "profiled": text,
    "header only": "\n".join(line for line in text.splitlines() if "RAIIAtenRecordFunctionHandle" not in line),
    "plain": "\n".join(line for line in text.splitlines() if "RAIIAtenRecordFunctionHandle" not in line and "aoti_runtime/utils.h" not in line),
}
paths = {}
for name, body in variants.items():
    paths[name] = os.path.join(work, name.replace(" ", "_") + ".cpp")
    open(paths[name], "w").write(body)


def gxx(name, extra=()):
    args = [paths[name] if arg == source else arg for arg in command]
    out = args.index("-o") + 1
    args[out] = paths[name][:-4] + ".so"
    begin = time.perf_counter()
    done = subprocess.run([*args, *extra], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return time.perf_counter() - begin, done.stderr


times = {name: [] for name in variants}
for round_ in range(ROUNDS):
    for name in (list(variants) if round_ % 2 == 0 else list(reversed(variants))):
        times[name].append(gxx(name)[0])
print(f"$ python gxx_parts.py {ROUNDS}   (torch {torch.__version__}, {os.cpu_count()} cores)")
for name, values in times.items():
    print(f"{name:12s} median {1000 * statistics.median(values):6.0f} ms   {' '.join(f'{1000 * v:.0f}' for v in values)}")
report = gxx("profiled", ["-ftime-report"])[1]
print("g++ -ftime-report of `profiled`, its phases (user, sys, wall, memory):")
for line in report.splitlines():
    if re.match(r"\s*phase |\s*TOTAL", line):
        print(line.rstrip())
