import type { Sql } from '../../storage/postgres.js';
import { sealSecret } from '../../storage/secret-box.js';

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
    values (${accountId}, ${c.host}, ${c.cert}, ${c.ca}, ${sealSecret(c.key)}, ${sealSecret(c.passphrase)})
    returning id, host, cert, ca, created_at`;
  return row!;
}

/** Passes every stored key and passphrase through `f` (sealing begins, or a key rotation); answers how many changed. */
export async function resealCertificateKeys(db: Sql, f: (value: string) => string): Promise<number> {
  let changed = 0;
  const rows = await db<{ id: string; private_key: string | null; passphrase: string | null }[]>`select id, private_key, passphrase from client_certificates
    where private_key is not null or passphrase is not null`;
  for (const row of rows) {
    const key = row.private_key && f(row.private_key);
    const passphrase = row.passphrase && f(row.passphrase);
    if (key === row.private_key && passphrase === row.passphrase) continue;
    await db`update client_certificates set private_key = ${key}, passphrase = ${passphrase} where id = ${row.id}`;
    changed++;
  }
  return changed;
}
