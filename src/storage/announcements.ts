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
