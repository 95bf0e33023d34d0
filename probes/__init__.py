"""The measuring engine: a library (``probes.sweep.run_profile``), a worker process around it
(``python -m probes.worker``) and its client, with no UI.

Importing it asks the CUDA profiler to detach after each session (``TEARDOWN_CUPTI``): left
attached after the first ``torch.profiler`` session, CUPTI makes every later CUDA launch of the
process cost more (+8 us per call of 3 kernels on an H200), and wall times would carry the tool's
own cost, in the worker as in a notebook that measures in-process.
"""

import os

os.environ.setdefault("TEARDOWN_CUPTI", "1")
