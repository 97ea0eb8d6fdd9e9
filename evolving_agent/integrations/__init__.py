"""How other systems reach the memory: the session's tools, the MCP server, the boot file.

``session_tools`` is the tool surface (always acting as ``session``), ``mcp_server``
serves it over stdio with the official MCP SDK, and ``bootfile`` writes the Markdown
boot context to a file that ``CLAUDE.md`` / ``AGENTS.md`` can import.
"""
