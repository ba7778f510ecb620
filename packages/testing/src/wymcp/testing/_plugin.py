"""The pytest plugin (entry point `wymcp`): the `wymcp_client` fixture."""
