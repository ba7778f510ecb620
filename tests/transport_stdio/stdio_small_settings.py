"""A small BODY_LIMIT, a short CALL_TIMEOUT and SHUTDOWN_GRACE for the limit tests."""

TOOLS = ["stdio_fixture_tools.Slow", "wymcp_conformance.Calc"]
BODY_LIMIT = 2048
CALL_TIMEOUT = 1.0
SHUTDOWN_GRACE = 0.5
STATE_SECRET = "stdio-small-fixture-state-key-not-a-secret-000"
