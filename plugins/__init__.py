"""ccbench's built-in algorithm plugins (installed as ``ccbench_plugins``).

Each module is a pluggy plugin advertised in the ``ccbench`` entry-point
group of ``pyproject.toml``, exactly as a third-party package would be.
"""
