"""ccbench's Hydra sweeper: the basic sweeper, composing each job once instead of twice.

Hydra only instantiates plugins that live in the ``hydra_plugins`` namespace
package, hence this folder (see docs/architecture.md).
"""
