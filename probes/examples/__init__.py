"""Example files of the user's own code, shipped with the package: ``kernel-tui demo`` profiles one,
and ``kernel-tui probes/examples/mlp_block.py:MlpBlock --input 'x: [N // 256, 256]'`` shows how.
Nothing imports them but the worker, when named."""
