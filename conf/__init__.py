# Hydra imports this package to read pkg://ccbench_conf. Everything config.yaml names must be
# in Hydra's ConfigStore by then, so composing works in a fresh interpreter without importing
# ccbench.running.app first (docs/harness.md "In Python"): the root schema (ccbench.running.config.CellConfig)
# and hydra/sweeper=ccbench (hydra_plugins/ccbench_sweeper, which ccbench.running.app registers).
import ccbench.running.app  # noqa: F401  (registers both)
