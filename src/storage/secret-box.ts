import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (docs/platform.md, "Secrets at rest"): TOTP secrets, OpenID client secrets, secret variables,
 * channel keys and client-certificate keys are stored sealed with AES-256-GCM under the service's key, so a database
 * dump or backup does not give them away. A sealed value is `enc1.<key id>.<iv, ciphertext and tag, base64url>`;
 * the key id (8 hex digits of the key's SHA-256) says which key sealed it, so a rotation reads old values with
 * the previous key while it seals new ones with the current one.
 */

const PREFIX = 'enc1.';
const SEALED = /^enc1\.([0-9a-f]{8})\.([A-Za-z0-9_-]{38,})$/;

/** A key's id: 8 hex digits of its SHA-256 (names the key, tells nothing of it). */
export const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

/** A sealed value this service cannot open: no key it holds sealed it, or it was changed. */
export class SecretUnreadable extends Error {
  constructor(why: string) {
    super(`A stored secret cannot be read: ${why}`);
    this.name = 'SecretUnreadable';
  }
}

export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  readonly currentId: string;

  constructor(
    private readonly current: Buffer,
    previous: readonly Buffer[] = [],
  ) {
    if (current.length !== 32) throw new Error('the secrets key must be 32 bytes');
    this.currentId = keyId(current);
    this.keys.set(this.currentId, current);
    for (const key of previous) if (key.length === 32) this.keys.set(keyId(key), key);
  }

  /** Whether `value` has the form of a sealed value (it may still not open). */
  static looksSealed(value: string): boolean {
    return SEALED.test(value);
  }

  /** The id of the key that sealed `value`, when it is sealed. */
  static sealedWith(value: string): string | undefined {
    return SEALED.exec(value)?.[1];
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current, iv);
    cipher.setAAD(Buffer.from(this.currentId));
    const body = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.currentId}.${body.toString('base64url')}`;
  }

  /** The plain value; a value that is not sealed (stored before sealing began) is answered as it is. */
  open(stored: string): string {
    const m = SEALED.exec(stored);
    if (!m) return stored;
    const key = this.keys.get(m[1]!);
    if (!key) throw new SecretUnreadable(`it was sealed with key ${m[1]}, which this process does not hold (SECRETS_KEY, SECRETS_KEY_PREVIOUS)`);
    const body = Buffer.from(m[2]!, 'base64url');
    if (body.length < 28) throw new SecretUnreadable('it is cut short');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, 12));
      decipher.setAAD(Buffer.from(m[1]!));
      decipher.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadable(`it does not open with key ${m[1]} (changed, or another key with the same id)`);
    }
  }

  /** Whether `value` is a sealed value this box opens (what is stored already, kept as it is on an update). */
  opens(value: string): boolean {
    if (!SEALED.test(value)) return false;
    try {
      this.open(value);
      return true;
    } catch {
      return false;
    }
  }

  /** Sealed with the current key: a value already sealed with it is kept, any other (plain, or under an old key) sealed anew. */
  reseal(value: string): string {
    if (SecretBox.sealedWith(value) === this.currentId && this.opens(value)) return value;
    return this.seal(this.opens(value) ? this.open(value) : value);
  }
}

let box: SecretBox | undefined;

/** The process's box, set once at start (service, workers, CLI) from SECRETS_KEY or the key file. */
export function useSecretBox(b: SecretBox): void {
  box = b;
}

function theBox(): SecretBox {
  if (!box) throw new Error('The secrets key was not loaded in this process (openSecrets was not called at start)');
  return box;
}

/** Seals a secret for storage; a value this process sealed already (kept from storage on an update) stays as it is. */
export function sealSecret(value: string): string;
export function sealSecret(value: string | null): string | null;
export function sealSecret(value: string | null): string | null {
  if (value === null || value === '') return value;
  const b = theBox();
  return b.opens(value) ? value : b.seal(value);
}

/** A stored secret, opened (a value stored before sealing began is answered as it is). */
export function openSecret(value: string): string;
export function openSecret(value: string | null): string | null;
export function openSecret(value: string | null): string | null {
  if (value === null || value === '' || !SecretBox.looksSealed(value)) return value;
  return theBox().open(value);
}

/** A new key, as SECRETS_KEY takes it (base64). */
export const newSecretsKey = () => randomBytes(32).toString('base64');

/** A variable as the stores hold it: its value sealed when it is secret. */
interface Variable {
  value: string | null;
  secret?: boolean;
}

/** The list with each secret value sealed (what is stored); other values as they are. */
export function sealVariables<T extends Variable>(vars: readonly T[]): T[];
export function sealVariables<T extends Variable>(vars: readonly T[] | null | undefined): T[] | null | undefined;
export function sealVariables<T extends Variable>(vars: readonly T[] | null | undefined): T[] | null | undefined {
  return vars?.map((v) => (v.secret && v.value ? { ...v, value: sealSecret(v.value) } : v));
}

/** The list with each secret value opened (what a run or a message template uses). */
export function openVariables<T extends Variable>(vars: readonly T[]): T[];
export function openVariables<T extends Variable>(vars: readonly T[] | null | undefined): T[] | null | undefined;
export function openVariables<T extends Variable>(vars: readonly T[] | null | undefined): T[] | null | undefined {
  return vars?.map((v) => (v.secret && v.value ? { ...v, value: openSecret(v.value) } : v));
}

/** The list with each secret value passed through `f` (a reseal: sealing begins, or a rotation); undefined when none changed. */
export function resealVariables<T extends Variable>(vars: readonly T[] | null | undefined, f: (value: string) => string): T[] | undefined {
  if (!vars) return undefined;
  let changed = false;
  const next = vars.map((v) => {
    if (!v.secret || !v.value) return v;
    const value = f(v.value);
    if (value !== v.value) changed = true;
    return { ...v, value };
  });
  return changed ? next : undefined;
}
