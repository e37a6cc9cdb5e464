
# The root schema (ccbench.config.CellConfig) must be in Hydra's ConfigStore
# before config.yaml's defaults list names it; importing this package (which
# Hydra does to read pkg://ccbench_conf) registers it.
from ccbench.config import register_configs

register_configs()
