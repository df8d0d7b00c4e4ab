"""Benchmarks of screvi-mcp: `python -m bench` prints a table and writes bench/results/*.json.

Each section lives in its own module; `runner` puts them together. Every figure is reported
with a ratio to a baseline measured in the same run, because absolute times on a shared
2-core machine say little on their own.
"""
