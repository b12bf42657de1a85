"""Benchmarks with their own runner (``python -m bench.run``); not part of pytest."""
