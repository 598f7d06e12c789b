import { createPrivateKey, X509Certificate } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../storage/deps.js';
import { notFound } from '../../http/errors.js';
import { UUID } from '../../http/ids.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Rules } from '../../http/rules.js';
import { Nullable } from '../../http/schemas.js';
import { listAccountRows } from '../common.js';
import { iso } from '../../model/time.js';

const Pem = (what: string) => Type.String({ minLength: 1, maxLength: 65536, description: `${what}, PEM` });

const CreateBody = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253, description: 'Host the certificate is presented to; `*.example.com` covers its subdomains' }),
    cert: Pem('The client certificate'),
    ca: Type.Optional(Nullable(Pem('The CA certificate'))),
    key: Type.Optional(Pem('The private key (never returned)')),
    passphrase: Type.Optional(Nullable(Type.String({ maxLength: 1024, description: 'Passphrase of an encrypted key (never returned)' }))),
  },
  { additionalProperties: false },
);

const ClientCertificate = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    host: Type.String(),
    cert: Type.String(),
    ca: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

interface CertificateRow {
  id: string;
  host: string;
  cert: string;
  ca: string | null;
  created_at: Date;
}

const toCertificate = (r: CertificateRow) => ({ id: r.id, host: r.host, cert: r.cert, ca: r.ca, created_at: iso(r.created_at) });

/** Certificates are parsed and the key opened with its passphrase, so a runner is never handed one that cannot work. */
function checkMaterial(body: { cert: string; ca?: string | null; key?: string; passphrase?: string | null }): void {
  const rules = new Rules();
  const parses = (pem: string) => {
    try {
      new X509Certificate(pem);
      return true;
    } catch {
      return false;
    }
  };
  rules.check(parses(body.cert), 'body.cert', 'certificate', 'must be a PEM certificate');
  if (body.ca) rules.check(parses(body.ca), 'body.ca', 'certificate', 'must be a PEM certificate');
  if (body.key !== undefined) {
    try {
      createPrivateKey({ key: body.key, passphrase: body.passphrase ?? undefined });
    } catch {
      rules.fail('body.key', 'key', body.passphrase ? 'must be a PEM private key that this passphrase opens' : 'must be a PEM private key (an encrypted one needs its passphrase)');
    }
  }
  rules.throwIfAny();
}

/** Client certificates API and SSL checks present to hosts that ask for mutual TLS. */
export function clientCertificateRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Client certificates';
  const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/client-certificates',
      operationId: 'listClientCertificates',
      summary: 'List client certificates (keys and passphrases are never shown)',
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(ClientCertificate) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows<CertificateRow>(sql, 'client_certificates', principal.account.id, query);
        return listReply(rows.map(toCertificate), total, query);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/client-certificates',
      operationId: 'createClientCertificate',
      summary: 'Add a client certificate',
      tag,
      access: 'write',
      schema: { body: CreateBody, responses: { 201: ClientCertificate } },
      handler: async ({ principal, body }) => {
        checkMaterial(body);
        const [row] = await sql<CertificateRow[]>`insert into client_certificates (account_id, host, cert, ca, private_key, passphrase)
          values (${principal.account.id}, ${body.host}, ${body.cert}, ${body.ca ?? null}, ${body.key ?? null}, ${body.passphrase ?? null})
          returning id, host, cert, ca, created_at`;
        return { status: 201, body: toCertificate(row) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/client-certificates/{id}',
      operationId: 'getClientCertificate',
      summary: 'Retrieve a client certificate',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: IdParams, responses: { 200: ClientCertificate } },
      handler: async ({ principal, params }) => {
        if (!UUID.test(params.id)) throw notFound();
        const [row] = await sql<CertificateRow[]>`select id, host, cert, ca, created_at from client_certificates
          where id = ${params.id} and account_id = ${principal.account.id}`;
        if (!row) throw notFound();
        return { status: 200, body: toCertificate(row) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/client-certificates/{id}',
      operationId: 'deleteClientCertificate',
      summary: 'Delete a client certificate',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: IdParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!UUID.test(params.id)) throw notFound();
        const rows = await sql`delete from client_certificates where id = ${params.id} and account_id = ${principal.account.id} returning id`;
        if (!rows.length) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
