import { OptionalKind, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { type AccessLevel, ROLES_FOR } from '../model/accounts.js';
import { CSRF_HEADER, SESSION_COOKIE } from './auth.js';
import { statusName } from './errors.js';
import type { AnyRoute } from './route.js';

export const ErrorSchema = Type.Object(
  {
    statusCode: Type.Integer({ description: 'Equals the HTTP status' }),
    error: Type.String({ description: 'Status name' }),
    message: Type.String(),
    attributes: Type.Optional(Type.Object({}, { additionalProperties: true })),
    errorCode: Type.Optional(Type.String({ description: "A machine-readable reason where the anchor's clients read one (ERR_NO_MATCHING_CHECKS)" })),
    deploymentId: Type.Optional(Type.String({ description: 'A project deploy refused (409) or still running (408): the deployment in the way' })),
  },
  { additionalProperties: false },
);

/** Every authenticated route can answer these; routes add their own through `errors`. */
// 503: every authenticated request reads Postgres, and waits at most PG_ACQUIRE_TIMEOUT_MS for a connection.
const AUTHENTICATED_ERRORS = [400, 401, 403, 429, 503];

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input: the message and `attributes.errors` name each field and rule',
  401: 'Missing or invalid API key',
  402: 'Plan limit reached',
  403: 'The key may not act for this account or perform this operation',
  404: 'Not found in this account',
  405: 'Method not allowed on this path',
  409: 'Conflict with the current state or another resource',
  413: 'Body larger than the limit',
  415: 'Body is not JSON',
  429: 'Rate limit exceeded; see Retry-After and the RateLimit-* headers',
  500: 'Unexpected server error; quote attributes.requestId',
  503: 'A dependency is unavailable or busy (Redis: what needs it waits at most 1.5 s; Postgres: a free connection at most PG_ACQUIRE_TIMEOUT_MS), then answers this; retry after Retry-After',
};

const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
};

const LIST_HEADERS = {
  'X-Total-Count': { description: 'Items in the whole list', schema: { type: 'integer' } },
  'Content-Range': {
    description: 'Zero-based positions of this page and the total, `<first>-<last>/<total>` (`*/<total>` when the page is empty)',
    schema: { type: 'string', pattern: '^(\\d+-\\d+|\\*)/\\d+$' },
  },
};

/** Drops TypeBox's symbol keys and undefined values so the document is plain JSON. */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

/**
 * A request schema as a client sees it: a property with a default may be left out (the service fills it),
 * so it is not `required` there, though the same property is required in responses.
 */
function requestSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(requestSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = requestSchema(value);
  const properties = out.properties as Record<string, { default?: unknown }> | undefined;
  if (Array.isArray(out.required) && properties) {
    const required = (out.required as string[]).filter((name) => !(properties[name] && 'default' in properties[name]));
    if (required.length) out.required = required;
    else delete out.required;
  }
  return out;
}

function parametersOf(schema: TSchema | undefined, location: 'path' | 'query' | 'header') {
  if (!schema) return [];
  const object = schema as TObject;
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties ?? {}).map(([name, prop]) => {
    const { description, ...rest } = plain(prop as TSchema);
    return {
      name,
      in: location,
      required: location === 'path' || (required.has(name) && !('default' in rest)),
      ...(description ? { description } : {}),
      // List parameters travel as one comma-separated value (`metrics=a,b`); repeating the name also works.
      ...(rest.type === 'array' ? { style: 'form', explode: false } : {}),
      schema: rest,
    };
  });
}

function errorResponse(status: number) {
  return {
    description: ERROR_DESCRIPTIONS[status] ?? statusName(status),
    ...(status === 429 ? { headers: { ...RATE_LIMIT_HEADERS, 'Retry-After': { schema: { type: 'integer' } } } } : {}),
    ...(status === 503 ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } } } : {}),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

export function buildOpenApi(routes: AnyRoute[], info: { title: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const authenticated = route.access !== 'public';
    const limited = authenticated || route.rateLimit !== undefined;
    const parameters = [
      ...parametersOf(route.schema.params, 'path'),
      ...parametersOf(route.schema.query, 'query'),
      ...parametersOf(route.schema.headers, 'header'),
      ...(authenticated ? [{ $ref: '#/components/parameters/ServiceAccount' }, { $ref: '#/components/parameters/ChecklyAccount' }] : []),
    ];
    const responses: Record<string, unknown> = {};
    const paged = Boolean((route.schema.query as TObject | undefined)?.properties?.page);
    for (const [status, schema] of Object.entries(route.schema.responses)) {
      const listed = paged && status === '200';
      responses[status] = {
        description: statusName(Number(status)),
        ...(limited || listed ? { headers: { ...(limited ? RATE_LIMIT_HEADERS : {}), ...(listed ? LIST_HEADERS : {}) } } : {}),
        ...(schema ? { content: { [route.contentType ?? 'application/json']: { schema: plain(schema) } } } : {}),
      };
    }
    const errors = new Set([...(authenticated ? AUTHENTICATED_ERRORS : []), ...(limited ? [429] : []), ...(route.errors ?? []), 500]);
    if (route.schema.body || route.rawBody) errors.add(413).add(415);
    for (const status of [...errors].sort()) responses[String(status)] = errorResponse(status);

    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      ...(route.deprecated ? { deprecated: true } : {}),
      ...(authenticated ? { security: [{ bearerAuth: [] }, { sessionCookie: [] }], 'x-roles': [...ROLES_FOR[route.access as AccessLevel]] } : { security: [] }),
      ...(parameters.length ? { parameters } : {}),
      ...(route.rawBody
        ? { requestBody: { required: true, content: { [route.rawBody.mediaType]: { schema: { type: 'string', format: 'binary' } } } } }
        : route.schema.body
          ? {
              requestBody: {
                required: !(OptionalKind in route.schema.body),
                content: { 'application/json': { schema: requestSchema(plain(route.schema.body)) } },
              },
            }
          : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }, { sessionCookie: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: "An API key: `Authorization: Bearer <API_KEY>`. A service key acts with its role; a person's key with the person's role now.",
        },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description: `A signed-in person's session (POST /v1/auth/sign-in). A write made with it needs the session's CSRF token in \`${CSRF_HEADER}\` or this service's Origin.`,
        },
      },
      parameters: {
        ServiceAccount: {
          name: 'x-service-account',
          in: 'header',
          required: false,
          description: "Account to act for; defaults to the key's own account. An account the key is not a member of is a 403.",
          schema: { type: 'string' },
        },
        ChecklyAccount: {
          name: 'x-checkly-account',
          in: 'header',
          required: false,
          description: "The anchor API's name for `x-service-account`, read the same way. Sending both with different values is a 400.",
          schema: { type: 'string' },
        },
      },
      schemas: { Error: plain(ErrorSchema) },
    },
  };
}
