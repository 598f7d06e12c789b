import { createRequire } from 'node:module';
import { hash, verify } from '@node-rs/argon2';

/**
 * Passwords (docs/people.md): argon2id from a maintained library (@node-rs/argon2) at 64 MiB, 3 passes, 1 lane
 * (about 125 ms a sign-in on the reference machine: a guess costs an attacker as much, a sign-in stays well under
 * 250 ms). A password must be 10 to 256 characters and not one of the 49,000 most common ones (the list
 * @zxcvbn-ts/language-common ships), nor the account's email.
 */
const PARAMS = { memoryCost: 65_536, timeCost: 3, parallelism: 1 } as const;

export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 256;

let common: Set<string> | undefined;
function commonPasswords(): Set<string> {
  if (!common) {
    const require = createRequire(import.meta.url);
    const list = require('@zxcvbn-ts/language-common/src/passwords.json') as string[];
    common = new Set(list.map((p) => p.toLowerCase()));
  }
  return common;
}

/** Why a password is refused, or undefined when it may be used. */
export function passwordProblem(password: string, email?: string): string | undefined {
  if (password.length < MIN_PASSWORD) return `must be at least ${MIN_PASSWORD} characters`;
  if (password.length > MAX_PASSWORD) return `must be at most ${MAX_PASSWORD} characters`;
  if (commonPasswords().has(password.toLowerCase())) return 'is one of the most common passwords; choose another';
  if (email && password.toLowerCase().includes(email.toLowerCase().split('@')[0]!) && email.split('@')[0]!.length >= 4) return 'must not contain the account\'s email name';
  return undefined;
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, PARAMS);
}

/** Whether `password` is the one `stored` was made from; a malformed hash never matches. */
export async function passwordMatches(stored: string | null, password: string): Promise<boolean> {
  if (!stored) return false;
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** Something to verify against when the user is unknown, so an unknown email costs as long as a wrong password. */
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hash('decoy password that matches nothing', PARAMS));
