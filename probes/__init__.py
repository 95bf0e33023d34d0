"""The measuring engine: a library (``probes.sweep.run_profile``), a worker process around it
(``python -m probes.worker``) and its client, with no UI."""
