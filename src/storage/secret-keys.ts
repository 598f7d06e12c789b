import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SecretsSettings } from '../platform/config.js';
import type { Sql } from './postgres.js';
import { SecretBox, SecretUnreadable, useSecretBox } from './secret-box.js';

/** A start that cannot go on with the secrets key it has: one clear line (the server prints it and exits 1). */
export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsKeyError';
  }
}

/** Any constant shared by every process of this service; serialises concurrent first starts. */
const KEY_LOCK = 727_401_002;
const CHECK_NAME = 'secrets-key-check';
const CHECK_TEXT = 'the secrets key of this service';
/** Set once every stored secret was sealed: until then, each start seals what is still plain (a pass cut short resumes). */
const SEALED_MARK = 'secrets-sealed';

/** What opening the secrets found: whether sealing began now (stored secrets are still plain), a rotation under way. */
export interface OpenedSecrets {
  box: SecretBox;
  /** No value was sealed before this start: the stored secrets are plain and are to be sealed (a fresh install or an upgrade). */
  sealingBegins: boolean;
  /** The database's check was sealed with a previous key: `npm run cli -- rotate-secrets` finishes the rotation. */
  rotationPending: boolean;
  /** A key file was made (a fresh install without SECRETS_KEY). */
  madeKeyFile: string | undefined;
}

/**
 * Loads the key secrets are sealed with and checks it against the database, once a process at start: SECRETS_KEY, else
 * the key file (SECRETS_KEY_FILE, made on first start when the database has never sealed anything). A check value
 * sealed with the key is kept in service_secrets, so a missing or wrong key ends the start with what to do, instead
 * of failing later on each secret it cannot open.
 */
export async function openSecrets(sql: Sql, settings: SecretsSettings): Promise<OpenedSecrets> {
  const opened = await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${KEY_LOCK})`;
    const [check] = await tx<{ value: Buffer }[]>`select value from service_secrets where name = ${CHECK_NAME}`;
    const [sealed] = await tx`select 1 from service_secrets where name = ${SEALED_MARK}`;
    let key = settings.key ?? readKeyFile(settings.keyFile);
    let madeKeyFile: string | undefined;
    if (!key) {
      if (check) {
        throw new SecretsKeyError(
          `The stored secrets are sealed, and this process has no key to open them: set SECRETS_KEY to the service's key, or put its key file at ${settings.keyFile} (SECRETS_KEY_FILE). docs/platform.md, "Secrets at rest"`,
        );
      }
      key = randomBytes(32);
      mkdirSync(path.dirname(settings.keyFile), { recursive: true, mode: 0o700 });
      writeFileSync(settings.keyFile, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      madeKeyFile = settings.keyFile;
    }
    const box = new SecretBox(key, settings.previous);
    let rotationPending = false;
    if (check) {
      const sealed = check.value.toString('utf8');
      try {
        if (box.open(sealed) !== CHECK_TEXT) throw new SecretUnreadable('the check value differs');
      } catch {
        throw new SecretsKeyError(
          `SECRETS_KEY${settings.key ? '' : ` (from ${settings.keyFile})`} is not the key the stored secrets were sealed with (key ${SecretBox.sealedWith(sealed) ?? '?'}; this one is ${box.currentId}). ` +
            'Set it to that key; during a rotation, set the old one as SECRETS_KEY_PREVIOUS. docs/platform.md, "Secrets at rest"',
        );
      }
      rotationPending = SecretBox.sealedWith(sealed) !== box.currentId;
    } else {
      await tx`insert into service_secrets (name, value) values (${CHECK_NAME}, ${Buffer.from(box.seal(CHECK_TEXT))})`;
    }
    return { box, sealingBegins: !sealed, rotationPending, madeKeyFile };
  });
  useSecretBox(opened.box);
  return opened;
}

/** Marks that every stored secret is sealed (the pass after sealing began is done). */
export async function markAllSealed(sql: Sql): Promise<void> {
  await sql`insert into service_secrets (name, value) values (${SEALED_MARK}, ${Buffer.from('1')}) on conflict (name) do nothing`;
}

/** Marks the rotation done: the check value is sealed with the current key. */
export async function resealKeyCheck(sql: Sql, box: SecretBox): Promise<void> {
  await sql`update service_secrets set value = ${Buffer.from(box.seal(CHECK_TEXT))} where name = ${CHECK_NAME}`;
}

function readKeyFile(file: string): Buffer | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8').trim();
  const key = Buffer.from(text, 'base64');
  if (key.length !== 32) throw new SecretsKeyError(`The secrets key file ${file} does not hold a key (32 bytes, base64)`);
  return key;
}
