"""The measuring engine: a library (``probes.sweep.run_profile``), a worker process around it
(``python -m probes.worker``) and its client, with no UI.

Importing it asks the CUDA profiler to detach after each session (``TEARDOWN_CUPTI``): left
attached after the first ``torch.profiler`` session, CUPTI makes every later CUDA launch of the
process cost more (+8 us per call of 3 kernels on an H200), and wall times would carry the tool's
own cost, in the worker as in a notebook that measures in-process. It is set here, before torch
is imported where ``probes`` comes first (the worker): set later, at the tool's first GPU session
instead, a CUDA-graph mode measured after earlier sessions (max-autotune, then reduce-overhead)
hit an illegal memory access once on the H200 box (torch 2.11, session 23, call C; not seen again
in four orders of setting it, session 24, call B: its cause is not known), where the same tests
pass with it set here. A script that profiles only the CPU of a machine with a GPU
never exits with it set (the same box, session 22, calls D and E): such a script sets
``TEARDOWN_CUPTI=0`` before importing ``probes``.
"""

import os

os.environ.setdefault("TEARDOWN_CUPTI", "1")
