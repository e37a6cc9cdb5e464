"""asv benchmarks of ccbench's methods (``asv run --python=same``; see docs/benchmarks.md)."""
