import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Middleware } from 'koa';
import { Agent, fetch } from 'undici';
import { HttpError, unauthorized } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import { type AccountRole, may } from '../model/accounts.js';
import type { Logger } from '../platform/logger.js';
import { type Api, TOOLS, ToolError } from './tools.js';

/**
 * `/mcp`: a Model Context Protocol server (Streamable HTTP, stateless: each POST is a whole exchange) for AI tools
 * (docs/mcp.md). A caller is an API key, as for the API; it sees only the tools its role may use, and each tool
 * calls this service's API with that key, so what it may read, change and how it is audited are the API's.
 */

const BEARER = /^Bearer\s+(\S+)$/i;
/** The tools' calls to this process: a direct connection, whatever proxy the environment sets. */
const SELF = new Agent({ keepAliveTimeout: 5_000 });
export const MCP_PATH = '/mcp';

interface KeyPrincipal {
  account: { id: string };
  role: AccountRole;
}

export interface McpOptions {
  /** The API key resolver the API uses (the account asked for, when the header names one). */
  resolveKey: (key: string, account: string | undefined) => Promise<KeyPrincipal | 'forbidden' | undefined>;
  logger: Logger;
  version: string;
}

export function mcpEndpoint(opts: McpOptions): Middleware {
  return async function mcpMiddleware(ctx, next) {
    if (ctx.path !== MCP_PATH) return next();
    if (ctx.method !== 'POST') {
      // Stateless: no server-to-client stream (GET) and no session to end (DELETE).
      ctx.set('Allow', 'POST');
      throw new HttpError(405, 'This MCP server is stateless: send each JSON-RPC message with POST');
    }
    const match = BEARER.exec(ctx.get('authorization'));
    if (!match) {
      ctx.set('WWW-Authenticate', 'Bearer');
      throw unauthorized(ctx.get('authorization') ? 'not-bearer' : 'missing-credentials');
    }
    // The account asked for, as the API reads it: one header or two that agree; a malformed id is no account of the key's.
    const service = ctx.get('x-service-account');
    const checkly = ctx.get('x-checkly-account');
    if (service && checkly && service !== checkly) throw new HttpError(400, 'x-service-account and x-checkly-account name different accounts; send one');
    const account = service || checkly || undefined;
    const wellFormed = account === undefined || UUID.test(account);
    const principal = await opts.resolveKey(match[1]!, wellFormed ? account : undefined);
    if (principal === undefined) throw unauthorized('invalid-key');
    if (principal === 'forbidden' || !wellFormed) throw new HttpError(403);

    // The service's own API, as this caller: the address this request came in on, so it reaches this process, over
    // a connection of its own (never a proxy the environment names: the key goes nowhere else).
    const socket = ctx.req.socket;
    const host = socket.localAddress?.includes(':') ? `[${socket.localAddress}]` : (socket.localAddress ?? '127.0.0.1');
    const base = `http://${host}:${socket.localPort}`;
    const gone = new AbortController();
    ctx.req.on('close', () => gone.abort());
    const api: Api = async (method, path, body) => {
      const res = await fetch(base + path, {
        method,
        dispatcher: SELF,
        signal: gone.signal,
        headers: {
          authorization: `Bearer ${match[1]}`,
          'x-checkly-account': principal.account.id,
          'user-agent': `monitoring-service-mcp/${opts.version}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: kept as text
      }
      return { status: res.status, body: parsed };
    };

    const server = new McpServer({ name: 'monitoring-service', version: opts.version }, { capabilities: { tools: {} } });
    for (const tool of TOOLS.filter((t) => may(principal.role, t.access)))
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: tool.input,
          annotations: { readOnlyHint: !tool.writes, openWorldHint: false },
        },
        async (args: Record<string, unknown>) => {
          try {
            const result = await tool.run(api, args);
            return { content: [{ type: 'text' as const, text: JSON.stringify(result, null, 2) }] };
          } catch (err) {
            if (!(err instanceof ToolError)) opts.logger.warn({ tool: tool.name, err: (err as Error).message }, 'MCP tool failed');
            return {
              isError: true,
              content: [{ type: 'text' as const, text: err instanceof ToolError ? err.message : 'The tool failed; the service log says why' }],
            };
          }
        },
      );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, ctx.request.body);
  };
}
