"""kernel-tui's measuring side, with no UI.

Three sub-packages, split along the torch line:

- ``probes.chain``: the chain language (parse and validate an op chain, its limits); no torch at
  import.
- ``probes.link``: the torch-free link to the worker (the protocol, the client and worker pair,
  state files, the summaries drawn from results); the app imports only this side and the chain
  language.
- ``probes.engine``: the torch engine (``probes.engine.sweep.run_profile``) and the worker process
  around it (``python -P -m probes.engine.worker``).

``probes.cli`` is the headless client (``kernel-tui profile``).
"""
