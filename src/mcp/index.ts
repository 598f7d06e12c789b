/** The MCP server for AI tools at /mcp (docs/mcp.md). What other folders may use. */
export { MCP_PATH, mcpEndpoint } from './endpoint.js';
export { TOOLS } from './tools.js';
