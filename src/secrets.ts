import { resealOidcSecrets, resealTotpSecrets } from './accounts/index.js';
import { resealChannelSecrets } from './alerts/index.js';
import { resealCheckVariables } from './checks/index.js';
import type { SecretsSettings } from './platform/config.js';
import type { Logger } from './platform/logger.js';
import { resealCertificateKeys, resealSecretVariables } from './resources/index.js';
import { resealAdhocDefinitions } from './runners/index.js';
import type { Sql } from './storage/postgres.js';
import type { SecretBox } from './storage/secret-box.js';
import { markAllSealed, type OpenedSecrets, openSecrets, resealKeyCheck } from './storage/secret-keys.js';

/**
 * Every place a secret is stored at rest (docs/platform.md, "Secrets at rest"): each passes its stored secrets through
 * a function, to seal what is still plain when sealing begins and to seal everything anew under a new key. A new kind
 * of stored secret is added here, and sealed and opened by its own repository.
 */
const SECRET_HOLDERS: { what: string; reseal: (sql: Sql, f: (value: string) => string) => Promise<number> }[] = [
  { what: 'TOTP secrets', reseal: resealTotpSecrets },
  { what: 'OpenID client secrets', reseal: resealOidcSecrets },
  { what: 'secret account variables', reseal: resealSecretVariables },
  { what: 'checks and groups with secret variables', reseal: resealCheckVariables },
  { what: 'alert channels', reseal: resealChannelSecrets },
  { what: 'client certificates', reseal: resealCertificateKeys },
  { what: 'ad-hoc runs', reseal: resealAdhocDefinitions },
];

/** Seals every stored secret with the box's current key (plain ones, and ones under a previous key); counts per holder. */
export async function resealAll(sql: Sql, box: SecretBox): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const holder of SECRET_HOLDERS) counts[holder.what] = await holder.reseal(sql, (v) => box.reseal(v));
  return counts;
}

/**
 * Loads the secrets key at start (every process that reads or writes stored secrets): a missing or wrong key ends the
 * start (SecretsKeyError); the first start with sealing seals what was stored plain before.
 */
export async function openServiceSecrets(sql: Sql, settings: SecretsSettings, logger: Logger): Promise<OpenedSecrets> {
  const opened = await openSecrets(sql, settings);
  if (opened.madeKeyFile) {
    logger.warn(
      { keyFile: opened.madeKeyFile, keyId: opened.box.currentId },
      'made the secrets key (secrets are sealed with it at rest): back this file up apart from the database, or set SECRETS_KEY',
    );
  }
  if (opened.sealingBegins) {
    const counts = await resealAll(sql, opened.box);
    await markAllSealed(sql);
    logger.info({ sealed: counts, keyId: opened.box.currentId }, 'sealed the stored secrets');
  }
  if (opened.rotationPending)
    logger.warn({ keyId: opened.box.currentId }, 'stored secrets are sealed with a previous key: run `npm run cli -- rotate-secrets` to finish the rotation');
  return opened;
}

/** The rotation's last step: every stored secret sealed with the current key, then the check value too. */
export async function rotateSecrets(sql: Sql, box: SecretBox): Promise<Record<string, number>> {
  const counts = await resealAll(sql, box);
  await resealKeyCheck(sql, box);
  return counts;
}
