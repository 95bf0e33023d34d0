"""The dtype names the tool speaks: a module of its own, light enough for the app's command line,
which reads them before it starts its workers (see ``probes.link.worker_process``)."""

DTYPES: tuple[str, ...] = ("fp32", "bf16", "fp16")
"""The dtypes offered for the default inputs (declared inputs may use others)."""
