"""Data-set plugins (generated data; the UCI sets are built into :mod:`ccbench.datasets`)."""
