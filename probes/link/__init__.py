"""The torch-free link to the worker: the protocol, the client and worker pair, the state files,
and the summaries the app and the CLI draw from. Imports neither torch nor textual."""
