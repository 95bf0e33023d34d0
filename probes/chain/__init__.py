"""The chain language: parse and validate an op chain, its limits and dtype names. No torch at import."""
