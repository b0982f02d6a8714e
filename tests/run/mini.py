"""The two-configuration portfolio the run, report, harvest and export tests share (one copy)."""

# Both variants sample (temperature > 0): these tests exercise budgets, retries and resume, which
# need a configuration to be worth retrying on a task (a greedy one is tried once per task).
MINI_PORTFOLIO = """schema_version = 1
[portfolio]
name = "mini"
base = "default"

[[variants]]
name = "baseline"
[variants.overrides]
"harness.sampling.temperature" = 0.7

[[variants]]
name = "short"
[variants.overrides]
"harness.max_turns" = 3
"harness.sampling.temperature" = 0.7
"""
