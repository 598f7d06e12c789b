import type { Sql } from '../../storage/postgres.js';

export interface CertificateRow {
  id: string;
  host: string;
  cert: string;
  ca: string | null;
  created_at: Date;
}

/** Stores a certificate with its key and passphrase; answers what the API shows of it (never the key). */
export async function insertCertificate(
  db: Sql,
  accountId: string,
  c: { host: string; cert: string; ca: string | null; key: string | null; passphrase: string | null },
): Promise<CertificateRow> {
  const [row] = await db<CertificateRow[]>`insert into client_certificates (account_id, host, cert, ca, private_key, passphrase)
    values (${accountId}, ${c.host}, ${c.cert}, ${c.ca}, ${c.key}, ${c.passphrase})
    returning id, host, cert, ca, created_at`;
  return row!;
}
