"""wymcp.testing: test wymcp tools in-process with pytest.

Direct calls through the gates, an in-process client over aiohttp's test
server, assertion helpers and a pytest plugin (the `wymcp_client` fixture).
"""

__all__: list[str] = []
