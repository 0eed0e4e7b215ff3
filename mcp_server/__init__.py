"""The MCP server on the web server (``/mcp``, Streamable HTTP): the tools of
``memoryapp_client/mcp_tools.py`` over the REST API's views, run in-process."""
