"""The torch measuring engine and the worker process that serves it.

Importing it asks the CUDA profiler to detach after each profile (``TEARDOWN_CUPTI``): left
attached after the first ``torch.profiler`` profile, CUPTI makes every later CUDA launch of the
process cost more, and wall times would carry the tool's own cost, in the worker as in a notebook
that measures in-process. It is set here, before torch is imported, because setting it later, at
the first GPU profile, is the order in which a CUDA-graph mode measured after other profiles hit
an illegal memory access. A script that profiles only the CPU of a machine with
a GPU sets ``TEARDOWN_CUPTI=0`` before importing the engine: with it set, such a process does not
exit.
"""

import os

os.environ.setdefault("TEARDOWN_CUPTI", "1")
