"""ccbench's built-in plugins (installed as ``ccbench_plugins``), one folder per family.

Each family folder's ``__init__`` is the pluggy plugin advertised in the
``ccbench`` entry-point group of ``pyproject.toml``, exactly as a third-party
package would be. It declares specs only and names its estimators as
``"module:Class"`` strings, so listing plugins imports no kernels. A family
imports only :mod:`ccbench` and its own folder (``docs/architecture.md``).
"""
