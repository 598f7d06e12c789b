import { createPrivateKey, X509Certificate } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { UUID } from '../../http/ids.js';
import type { AnyRoute } from '../../http/route.js';
import { Rules } from '../../http/rules.js';
import { Nullable } from '../../http/schemas.js';
import { iso } from '../../model/time.js';
import type { Deps } from '../../storage/deps.js';
import { crudRoutes, operationsOf } from '../crud.js';
import { type CertificateRow, insertCertificate } from './repository.js';

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
      rules.fail(
        'body.key',
        'key',
        body.passphrase ? 'must be a PEM private key that this passphrase opens' : 'must be a PEM private key (an encrypted one needs its passphrase)',
      );
    }
  }
  rules.throwIfAny();
}

/** Client certificates API and SSL checks present to hosts that ask for mutual TLS. */
export function clientCertificateRoutes({ sql }: Deps): AnyRoute[] {
  return crudRoutes(sql, {
    tag: 'Client certificates',
    path: '/v1/client-certificates',
    table: 'client_certificates',
    param: 'id',
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
    id: (raw) => (typeof raw === 'string' && UUID.test(raw) ? raw : undefined),
    operations: operationsOf(
      { id: 'ClientCertificate', ids: 'ClientCertificates', one: 'a client certificate', many: 'client certificates' },
      { list: 'List client certificates (keys and passphrases are never shown)', create: 'Add a client certificate' },
      false,
    ),
    view: ClientCertificate,
    toView: toCertificate,
    create: {
      body: CreateBody,
      run: (db, principal, body) => {
        checkMaterial(body);
        return insertCertificate(db, principal.account.id, {
          host: body.host,
          cert: body.cert,
          ca: body.ca ?? null,
          key: body.key ?? null,
          passphrase: body.passphrase ?? null,
        });
      },
    },
  });
}
