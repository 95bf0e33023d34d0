"""kernel-tui: the Textual app (`kernel-tui`), a client of the probes worker. Never imports torch."""
