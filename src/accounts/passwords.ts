import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { HttpError } from '../http/errors.js';

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
  if (email && password.toLowerCase().includes(email.toLowerCase().split('@')[0]!) && email.split('@')[0]!.length >= 4)
    return "must not contain the account's email name";
  return undefined;
}

/**
 * Hashing runs on threads of its own, never on libuv's pool (name lookups, compression, file reads and the embedded
 * engine's queries wait on that one): at most `threads` hashes at once, `queue` more waiting, and past that a 503
 * at once (docs/people.md, "Throttling").
 */
export interface HashingLimits {
  threads: number;
  queue: number;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const argon2 = require(workerData.argon2);
parentPort.on('message', ({ id, op, a, b, params }) => {
  try {
    parentPort.postMessage({ id, result: op === 'hash' ? argon2.hashSync(a, params) : argon2.verifySync(a, b) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});`;

interface Job {
  op: 'hash' | 'verify';
  a: string;
  b?: string;
  resolve: (v: string | boolean) => void;
  reject: (e: Error) => void;
}

/** The refusal past the hashing limits: the service is busy hashing, not broken; try again in a moment. */
export class HashingBusy extends HttpError {
  constructor() {
    super(503, 'Too many sign-ins at once: try again in a moment', { reason: 'busy' }, { 'Retry-After': '1' });
  }
}

class HashingPool {
  private idle: Worker[] = [];
  private all: Worker[] = [];
  private waiting: Job[] = [];
  private running = new Map<Worker, { id: number; job: Job }>();
  private seq = 0;
  /** Hashes started or done since the process began (the sign-in suites count them). */
  started = 0;

  constructor(public limits: HashingLimits) {}

  run(op: 'hash' | 'verify', a: string, b?: string): Promise<string | boolean> {
    if (this.waiting.length >= this.limits.queue && this.running.size >= this.limits.threads) return Promise.reject(new HashingBusy());
    return new Promise((resolve, reject) => {
      this.waiting.push({ op, a, b, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiting.length) {
      const worker = this.idle.pop() ?? (this.all.length < this.limits.threads ? this.spawn() : undefined);
      if (!worker) return;
      const job = this.waiting.shift()!;
      const id = ++this.seq;
      this.running.set(worker, { id, job });
      this.started++;
      worker.postMessage({ id, op: job.op, a: job.a, b: job.b, params: PARAMS });
    }
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER, { eval: true, workerData: { argon2: createRequire(import.meta.url).resolve('@node-rs/argon2') } });
    worker.unref();
    this.all.push(worker);
    worker.on('message', (m: { id: number; result?: string | boolean; error?: string }) => {
      const current = this.running.get(worker);
      this.running.delete(worker);
      this.idle.push(worker);
      if (current && current.id === m.id) {
        if (m.error !== undefined) current.job.reject(new Error(m.error));
        else current.job.resolve(m.result!);
      }
      this.pump();
    });
    worker.on('error', (err) => this.lose(worker, err));
    worker.on('exit', (code) => this.lose(worker, new Error(`the hashing thread stopped (${code})`)));
    return worker;
  }

  private lose(worker: Worker, err: Error): void {
    this.all = this.all.filter((w) => w !== worker);
    this.idle = this.idle.filter((w) => w !== worker);
    const current = this.running.get(worker);
    this.running.delete(worker);
    current?.job.reject(err);
    this.pump();
  }
}

const pool = new HashingPool({ threads: 1, queue: 16 });

/** Sets how many hashes run at once and how many may wait (PASSWORD_HASH_THREADS, PASSWORD_HASH_QUEUE). */
export function limitHashing(limits: HashingLimits): void {
  pool.limits = { ...limits };
}

/** How many hashes this process started (a test reads it to see a burst was refused before hashing). */
export const hashesStarted = () => pool.started;

export async function hashPassword(password: string): Promise<string> {
  return (await pool.run('hash', password)) as string;
}

/** Whether `password` is the one `stored` was made from; a malformed hash never matches. Past the limits: HashingBusy. */
export async function passwordMatches(stored: string | null, password: string): Promise<boolean> {
  if (!stored) return false;
  try {
    return (await pool.run('verify', stored, password)) as boolean;
  } catch (err) {
    if (err instanceof HashingBusy) throw err;
    return false;
  }
}

/** Something to verify against when the user is unknown, so an unknown email costs as long as a wrong password. */
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hashPassword('decoy password that matches nothing').catch((err) => ((decoy = undefined), Promise.reject(err))));
