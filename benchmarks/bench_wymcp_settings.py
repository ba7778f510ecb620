"""The settings `wymcp serve --settings bench_wymcp_settings` runs in the benchmark."""

TOOLS = ["bench_wymcp_tools.Calc", "bench_wymcp_tools.Orders"]
SERVER_NAME = "wymcp-bench"
SERVER_VERSION = "1"
# A fixed key so `wymcp serve` does not warn about per-process keys; protects nothing.
STATE_SECRET = "wymcp-benchmark-state-key-not-a-secret-0123456789"  # noqa: S105 - a benchmark's key, not a secret
