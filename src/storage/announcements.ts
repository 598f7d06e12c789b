import { randomUUID } from 'node:crypto';
import type { Logger } from '../platform/logger.js';
import type { Sql } from './postgres.js';

/** How often a process checks it still hears a channel's announcements, and how long it waits for its own. */
const PROBE_EVERY_MS = 15_000;
const PROBE_WAIT_MS = 3_000;

export interface AnnouncementsOptions {
  sql: Sql;
  /** The channel migrations' triggers announce committed changes on (pg_notify). */
  channel: string;
  logger: Logger;
  /** What is kept without asking Postgres, for the log when it no longer can be ("API keys", "check definitions"). */
  what: string;
  /**
   * A change was announced (its payload, '' when the trigger names nothing), or, with `null`, anything may have
   * changed unheard: listening (re)started, or a probe went unanswered. Either way what was kept from before goes.
   */
  changed(payload: string | null): void;
}

/**
 * The listening side of what a process keeps from Postgres and forgets when told: a change committed to the rows it
 * is made of is announced on a channel (a migration's triggers), and the process forgets what the announcement
 * names. postgres.js keeps one connection for LISTEN and listens again after it reconnects; each (re)start of
 * listening reports that anything may have changed (announcements made while the connection was down were missed).
 * A connection can die without either side noticing for minutes, or a pooler can accept LISTEN and deliver nothing:
 * every 15 s the process announces a probe of its own, and until it hears it back (within 3 s) `heard` is false,
 * so nothing should be kept. Between a connection's silent death and the next failed probe, at most 18 s pass.
 */
export class Announcements {
  private listening = false;
  private readonly probeId = randomUUID();
  private probes = 0;
  private probeAwaited: string | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private probeDeadline: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly opts: AnnouncementsOptions) {
    opts.sql
      .listen(
        opts.channel,
        (payload) => {
          if (payload.startsWith('probe:')) {
            if (payload === this.probeAwaited) this.heardBack();
            return;
          }
          opts.changed(payload);
        },
        () => {
          opts.changed(null);
          this.heardBack();
        },
      )
      .then(
        () => {
          if (this.stopped) return;
          this.probeTimer = setInterval(() => this.probe(), PROBE_EVERY_MS);
          this.probeTimer.unref();
        },
        (err: Error) => {
          this.listening = false;
          opts.logger.warn({ err: err.message, channel: opts.channel }, `${opts.what} are read without a cache: listening for their changes failed`);
        },
      );
  }

  /** Whether announcements are heard now: only then may anything be kept. */
  get heard(): boolean {
    return this.listening;
  }

  /** Stops the probe (the listening connection itself closes with the pool). */
  stop(): void {
    this.stopped = true;
    this.listening = false;
    clearInterval(this.probeTimer);
    clearTimeout(this.probeDeadline);
  }

  /** Listening works (again): what was kept meanwhile may have missed an announcement, so it goes. */
  private heardBack(): void {
    clearTimeout(this.probeDeadline);
    this.probeAwaited = undefined;
    if (this.stopped) return;
    if (!this.listening) this.opts.changed(null);
    this.listening = true;
  }

  private probe(): void {
    if (this.probeAwaited || this.stopped) return;
    const payload = `probe:${this.probeId}:${++this.probes}`;
    this.probeAwaited = payload;
    this.probeDeadline = setTimeout(() => {
      if (this.probeAwaited !== payload) return;
      this.probeAwaited = undefined;
      if (this.listening)
        this.opts.logger.warn(
          { channel: this.opts.channel },
          `${this.opts.what} are read without a cache until announcements of their changes are heard again`,
        );
      this.listening = false;
      this.opts.changed(null);
    }, PROBE_WAIT_MS);
    this.probeDeadline.unref();
    this.opts.sql`select pg_notify(${this.opts.channel}, ${payload})`.catch(() => undefined);
  }
}

/**
 * Which reads a cache fed by announcements may keep: a read begun before its account (or everything) was last
 * forgotten is not kept, since what it read may be older than the change announced. Take `mark()` as a read starts,
 * ask `keeps(account, mark)` when it ends. At most `maxAccounts` forgotten accounts are remembered; past that, a
 * forgetting of one account forgets everything (`forget` says so).
 */
export class ForgetClock {
  private seq = 0;
  private all = 0;
  /** Per account, the count at its last forgetting. */
  private readonly forgotten = new Map<string, number>();

  constructor(private readonly maxAccounts = Number.POSITIVE_INFINITY) {}

  mark(): number {
    return this.seq;
  }

  keeps(accountId: string, mark: number): boolean {
    return Math.max(this.all, this.forgotten.get(accountId) ?? 0) <= mark;
  }

  /** Records a forgetting of one account, or of all; true when everything is forgotten (asked, or the bound reached). */
  forget(accountId?: string): boolean {
    this.seq++;
    if (accountId === undefined || this.forgotten.size >= this.maxAccounts) {
      this.all = this.seq;
      this.forgotten.clear();
      return true;
    }
    this.forgotten.set(accountId, this.seq);
    return false;
  }
}

export interface KeptByAccountOptions {
  sql: Sql;
  logger: Logger;
  /** The channel whose announcements (payload: an account's id) make the process forget that account's values. */
  channel: string;
  /** What is kept, for the log (Announcements). */
  what: string;
  /** At most this many values are kept; beyond it, the others are read each time. */
  maxKept: number;
  /** Accounts whose last forgetting is remembered (ForgetClock). */
  maxForgotten: number;
}

/**
 * Values read from Postgres by account and id (a check's type, what check state judges it by), kept until a change
 * of that account is announced on the channel. A read begun before its account was forgotten is not kept, nor is
 * anything while announcements are not heard: the values are then read each time.
 */
export class KeptByAccount<V> {
  private readonly accounts = new Map<string, Map<string, V>>();
  private kept = 0;
  private readonly clock: ForgetClock;
  private readonly announcements: Announcements;

  constructor(private readonly opts: KeptByAccountOptions) {
    this.clock = new ForgetClock(opts.maxForgotten);
    this.announcements = new Announcements({
      sql: opts.sql,
      channel: opts.channel,
      logger: opts.logger,
      what: opts.what,
      changed: (account) => this.forget(account || undefined),
    });
  }

  /**
   * The account's values among `ids`: kept ones as kept, the rest from `read` (given the missing ids; ids it answers
   * nothing for are never kept) and kept, `prepare`d first (to freeze what many will share).
   */
  async get(
    accountId: string,
    ids: readonly string[],
    read: (missing: string[]) => Promise<Map<string, V>>,
    prepare?: (value: V) => void,
  ): Promise<Map<string, V>> {
    const kept = this.accounts.get(accountId);
    const out = new Map<string, V>();
    const missing: string[] = [];
    for (const id of ids) {
      const value = kept?.get(id);
      if (value === undefined) missing.push(id);
      else out.set(id, value);
    }
    if (!missing.length) return out;
    const before = this.clock.mark();
    const fresh = await read(missing);
    const keep = this.announcements.heard && this.clock.keeps(accountId, before);
    let into = this.accounts.get(accountId);
    for (const [id, value] of fresh) {
      out.set(id, value);
      if (!keep || this.kept >= this.opts.maxKept) continue;
      if (!into) {
        into = new Map();
        this.accounts.set(accountId, into);
      }
      if (!into.has(id)) this.kept++;
      prepare?.(value);
      into.set(id, value);
    }
    return out;
  }

  /** Forgets what was kept of one account, or of all; reads under way for it are not kept. */
  forget(accountId?: string): void {
    // One forgotten account remembered per account ever announced: past a bound, everything is forgotten.
    const everything = this.clock.forget(accountId);
    if (everything || accountId === undefined) {
      this.accounts.clear();
      this.kept = 0;
      return;
    }
    this.kept -= this.accounts.get(accountId)?.size ?? 0;
    this.accounts.delete(accountId);
  }

  /** Values kept, and whether announcements are heard (for tests). */
  stats(): { kept: number; heard: boolean } {
    return { kept: this.kept, heard: this.announcements.heard };
  }

  stop(): void {
    this.announcements.stop();
  }
}
