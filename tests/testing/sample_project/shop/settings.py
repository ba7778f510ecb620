"""The shop's wymcp settings (WYMCP_SETTINGS_MODULE=shop.settings)."""

TOOLS = ["shop.tools.Stock"]
SERVER_NAME = "shop"
