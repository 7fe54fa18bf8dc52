"""The emulated MCP server kinds (tools and their in-memory state)."""
