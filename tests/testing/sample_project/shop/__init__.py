"""A small shop served by wymcp: the sample project of wymcp.testing."""
