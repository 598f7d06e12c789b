import { createHash, randomUUID } from 'node:crypto';
import { JsonRows } from '../model/json-bytes.js';
import { clickHouseTimeMs, toClickHouseTime } from '../model/time.js';
import type { Logger } from '../platform/logger.js';
import type { InsertOptions, Store } from '../storage/clickhouse/store.js';
import { registerRollupHorizon, rollupSelect, TIERS } from './rollups.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/**
 * The most checks one tick statement aggregates. An hour of 50,000 checks in one statement took 2.6 GB more memory
 * while it ran (the daily tier keeps 28 quantile sketches per check); in parts of 2,000 checks (by a hash of the
 * check id, each part reading the range again), 0.67 GB, for twice the CPU (`npm run bench:ticks`, bench/README.md).
 */
const CHECKS_PER_STATEMENT = 2000;
const HORIZON_KEY = 'rolled_through';
/** Where a tick under way rolls to, written before it rolls anything (a tick a crash cut short is redone the same). */
const INTENT_KEY = 'rolling_to';
/**
 * The range a tick chose, in the text of its statements: a background statement takes no parameters (chdb runs every
 * statement with parameters one at a time in the whole process, so a niced one would hold up the service's). The two
 * ends are whole milliseconds this code computed, checked to be safe integers, never anything from a request; the
 * range is not read back from rollup_state, so a statement rolls exactly what the tick chose and names in its tokens.
 */
function rangeInText(from: number, to: number): string {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) throw new Error(`a tick's range is whole milliseconds, not ${from}–${to}`);
  return `started_at >= fromUnixTimestamp64Milli(toInt64(${from}), 'UTC') AND started_at < fromUnixTimestamp64Milli(toInt64(${to}), 'UTC') AND late_batch = ''`;
}
/** How many parts the range ending at a time is rolled in (`rolling_parts:<end>`, the count as the time's ms), written with the intent. */
const partsKey = (to: number) => `rolling_parts:${to}`;

export interface RollupTicksOptions {
  logger: Logger;
  /** How often a tick looks whether the horizon can move (default a minute). */
  everyMs?: number;
  /**
   * The horizon moves in whole steps of this (default an hour). A rollup bucket is read only once it ends by the
   * horizon, so rolling a bucket minute by minute only made more, smaller aggregate states (each a sketch per metric)
   * for the engine to build, write and merge; an hour's runs of a check go into one.
   */
  stepMs?: number;
  /** How far behind now the horizon stays, so that runs arrive before it passes them (default a minute). */
  lagMs?: number;
  /**
   * A tick's statements run below the service's own work (QueryOptions.background; default true): nobody waits for
   * them, while the runners' main thread shares the machine's cores with them. False only to measure the difference.
   */
  background?: boolean;
}

/**
 * ROLLUPS=ticks (docs/analytics.md, "Rollups"): the rollup tables filled once an hour instead of by views on
 * every insert (the views cost the embedded engine a fixed ~100 ms each per insert, bench/README.md). Only for
 * the embedded engine: every insert into check_results goes through `store` (this process holds the engine), so
 * one lock orders inserts against ticks.
 *
 * - The horizon H (rollup_state `rolled_through`): every run started before H is in the rollup tables. A tick rolls
 *   the runs started in [H, H′) (`late_batch = ''`) with one INSERT … SELECT per tier, each with a token made of
 *   the tier and the range, then H becomes H′ (whole steps of an hour, lagMs behind). H′ is written before anything is
 *   rolled: a tick a crash cut short is redone over the same range, under the same tokens, and its repeats dropped.
 * - An insert, under the same lock, marks every row started before H as late: `late_batch` names the insert (its
 *   deduplication token). Once it has landed, the late rows are rolled (`settle`), with a token made of that name
 *   and the tier: an insert repeated rolls the same rows under the same token, and is dropped. A caller that
 *   leaves out rows already stored (ingest does) passes them to `settle` again, so a crash between the insert
 *   and its roll-up is made good by the repeat.
 * - Reports read a rollup bucket only when it ends by H (planSources), the rest from the runs: a tick never
 *   changes an answer, and a late run is in its bucket's rollup a statement after it is stored.
 */
export class RollupTicks {
  private horizon = -Infinity;
  private pendingTo?: number;
  private lock: Promise<unknown> = Promise.resolve();
  private timer?: NodeJS.Timeout;
  private unregister?: () => void;
  private readonly everyMs: number;
  private readonly stepMs: number;
  private readonly lagMs: number;
  private readonly background: boolean;
  /** The tick under way: its statements run outside the lock (runs stored meanwhile in its range count as late). */
  private rolling?: Promise<void>;

  constructor(
    private inner: Store,
    private readonly opts: RollupTicksOptions,
  ) {
    this.everyMs = opts.everyMs ?? MINUTE_MS;
    this.stepMs = opts.stepMs ?? HOUR_MS;
    this.lagMs = opts.lagMs ?? MINUTE_MS;
    this.background = opts.background ?? true;
  }

  /**
   * Reads the horizon, or sets the first: the later of now and the newest run stored (whole minutes), so no run the
   * views rolled before (an upgrade from ROLLUPS=views) is rolled again. Then ticks every `everyMs`.
   */
  async start(now = Date.now()): Promise<void> {
    const kept = await this.readState(HORIZON_KEY);
    if (kept !== undefined) {
      this.horizon = kept;
      // A tick a crash cut short is finished first, over the same range (so under the same tokens).
      const intent = await this.readState(INTENT_KEY);
      if (intent !== undefined && intent > this.horizon) this.pendingTo = intent;
    } else {
      const [newest] = await this.inner.query<{ at: number | null; n: number }>(
        'SELECT toUnixTimestamp64Milli(max(started_at)) AS at, count() AS n FROM check_results',
      );
      const after = Number(newest?.n) ? Number(newest.at) + 1 : now;
      this.horizon = Math.ceil(Math.max(now, after) / MINUTE_MS) * MINUTE_MS;
      await this.writeState(HORIZON_KEY, this.horizon);
    }
    this.unregister = registerRollupHorizon(() => this.horizon);
    // A range a crash cut short is finished first, in the background: inserts already count its runs as late, and a
    // start does not wait for (nor fail with) an hour's roll-up.
    if (this.pendingTo !== undefined) this.tick(now).catch((err: Error) => this.failed(err));
    this.timer = setInterval(() => {
      if (!this.rolling) this.tick().catch((err: Error) => this.failed(err));
    }, this.everyMs);
    this.timer.unref();
  }

  private failed(err: Error): void {
    this.opts.logger.error({ err: err.message }, 'could not roll up the runs past the rollup horizon; trying again at the next tick');
  }

  /** Goes on through another open store of the same engine (the one it used is closing). */
  useStore(store: Store): void {
    this.inner = store;
  }

  /** Every run started before this is in the rollup tables. */
  get rolledThrough(): number {
    return this.horizon;
  }

  /** The end of the range a tick is rolling now (or a crash cut short), undefined between ticks. */
  get rollingTo(): number | undefined {
    return this.pendingTo;
  }

  /** Runs started before this are rolled as late when stored: a range a tick has begun (and may redo) counts too. */
  private get lateBefore(): number {
    return this.pendingTo ?? this.horizon;
  }

  /** The time a rollup_state key holds (the latest written), undefined when it was never written. */
  private async readState(key: string): Promise<number | undefined> {
    const [row] = await this.inner.query<{ at: number | null; n: number }>(
      'SELECT toUnixTimestamp64Milli(max(at)) AS at, count() AS n FROM rollup_state WHERE key = {key:String}',
      { key },
    );
    return Number(row?.n) ? Number(row.at) : undefined;
  }

  private writeState(key: string, at: number): Promise<void> {
    return this.inner.command("INSERT INTO rollup_state (key, at) VALUES ({key:String}, {at:DateTime64(3, 'UTC')})", { key, at: toClickHouseTime(at) });
  }

  /** Runs `fn` with no insert and no tick beside it. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  /**
   * Rolls the runs started from the horizon to `now` − lagMs (whole steps), then moves the horizon there. Only choosing
   * the range holds the lock: from then on runs stored that started in it are marked late and rolled as they are
   * stored, so the range's unmarked runs no longer change while its statements run, and inserts do not wait for them.
   */
  tick(now = Date.now()): Promise<void> {
    // Ticks asked while one runs go after it (the timer's are skipped instead).
    const run: Promise<void> = (this.rolling ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => this.rollUpTo(now))
      .finally(() => {
        if (this.rolling === run) this.rolling = undefined;
      });
    this.rolling = run;
    return run;
  }

  /** One step after another, each chosen, rolled and passed on its own (a long outage is caught up an hour at a time). */
  private async rollUpTo(now: number): Promise<void> {
    while (await this.rollNext(now));
  }

  /** Rolls the next step (the range a crash cut short first); false when there is none yet. */
  private async rollNext(now: number): Promise<boolean> {
    const where = "started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')} AND late_batch = ''";
    const range = await this.exclusive(async () => {
      const from = this.horizon;
      // At most one step at a time: what a statement holds is measured for an hour of runs, not a day's backlog.
      const to =
        this.pendingTo ?? Math.min(Math.floor((now - this.lagMs) / this.stepMs) * this.stepMs, Math.floor(from / this.stepMs) * this.stepMs + this.stepMs);
      if (!(to > from)) return undefined;
      const params = { from: toClickHouseTime(from), to: toClickHouseTime(to) };
      let parts: number | undefined;
      if (this.pendingTo !== undefined) parts = await this.readState(partsKey(to));
      else {
        // The split, written before the intent: a redo splits (and names) its statements the same way. One thread a
        // statement: a tick is background work, and one aggregation table per statement holds less at once.
        const [counted] = await this.inner.query<{ n: number }>(`SELECT uniqExact(check_id) AS n FROM check_results WHERE ${where}`, params);
        parts = Math.max(1, Math.ceil(Number(counted?.n ?? 0) / CHECKS_PER_STATEMENT));
        await this.writeState(partsKey(to), parts);
        await this.writeState(INTENT_KEY, to);
        // From here until the horizon moves, this range is redone the same way if anything fails (same tokens), and a
        // run stored meanwhile that started in it is rolled as late: what the range holds unmarked no longer changes.
        this.pendingTo = to;
      }
      // An intent without a split was written by a version that rolled a range in one statement per tier.
      return { from, to, params, parts: parts ?? 1 };
    });
    if (!range) return false;
    const { from, to, params, parts } = range;
    // In the background (below the service's threads, on a connection of their own), a statement takes no parameters.
    const rolling = this.background ? rangeInText(from, to) : where;
    for (const tier of TIERS) {
      for (let part = 0; part < parts; part++) {
        const name = parts === 1 ? `${from}-${to}` : `${from}-${to}:${part}/${parts}`;
        const inPart = parts === 1 ? rolling : `${rolling} AND cityHash64(check_id) % ${parts} = ${part}`;
        const statement = `INSERT INTO ${tier.table} SETTINGS insert_deduplication_token = '${token('tick', tier.id, name)}', max_threads = 1\n${rollupSelect(tier, inPart)}`;
        if (this.background) await this.inner.command(statement, {}, { background: true });
        else await this.inner.command(statement, params);
      }
    }
    await this.exclusive(async () => {
      await this.writeState(HORIZON_KEY, to);
      this.horizon = to;
      this.pendingTo = undefined;
    });
    return true;
  }

  /**
   * An insert into check_results: rows started before the horizon are marked late (`late_batch`, a column this
   * adds) and rolled once stored. Other tables pass through.
   */
  async insert(table: string, columns: readonly string[], rows: readonly unknown[][] | JsonRows, options: InsertOptions = {}): Promise<void> {
    if (table !== 'check_results' || rows.length === 0) return this.inner.insert(table, columns, rows, options);
    const at = columns.indexOf('started_at');
    if (at < 0 || !columns.includes('result_id') || columns.includes('late_batch'))
      throw new Error('runs are inserted with started_at and result_id, and without late_batch');
    const batch = String(options.settings?.insert_deduplication_token ?? randomUUID());
    let anyLate = false;
    await this.exclusive(async () => {
      const before = this.lateBefore;
      const lateBatch = (startedAt: number) => {
        const isLate = startedAt < before;
        anyLate ||= isLate;
        return isLate ? batch : '';
      };
      // Rows held as bytes with their runs are not read back for their start times (JsonRows.startedAtMs).
      const marked =
        rows instanceof JsonRows
          ? rows.withColumn((i) => lateBatch(rows.startedAtMs(i, at)))
          : rows.map((row) => [...row, lateBatch(clickHouseTimeMs(row[at]))]);
      await this.inner.insert(table, [...columns, 'late_batch'], marked, options);
    });
    if (anyLate) await this.rollLate(batch);
  }

  /**
   * Rolls the late runs among `runs`, already stored: every run of each insert that stored one of them, under that
   * insert's token (so what was rolled before is dropped). Runs not started before the horizon are the ticks'.
   */
  async settle(runs: readonly { resultId: string; startedAt: number }[]): Promise<void> {
    const before = this.lateBefore;
    const ids = runs.filter((r) => r.startedAt < before).map((r) => r.resultId);
    if (!ids.length) return;
    const batches = await this.inner.query<{ batch: string }>(
      "SELECT DISTINCT late_batch AS batch FROM check_results WHERE result_id IN {ids:Array(UUID)} AND late_batch != ''",
      { ids },
    );
    for (const { batch } of batches) await this.rollLate(batch);
  }

  /** Rolls the late runs one insert stored: all of them, so the token stands for the same rows each time. */
  private async rollLate(batch: string): Promise<void> {
    for (const tier of TIERS) {
      await this.inner.command(
        `INSERT INTO ${tier.table} SETTINGS insert_deduplication_token = '${token('late', tier.id, batch)}'\n${rollupSelect(tier, 'late_batch = {batch:String}')}`,
        { batch },
      );
    }
  }

  /** Stops ticking; a tick under way finishes first (so a graceful stop never leaves one cut short). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.rolling?.catch(() => undefined);
    await this.lock;
    this.unregister?.();
  }
}

/** With the views filling the rollups again: the ticks' horizon and intent go, so ticks would start afresh. */
export async function forgetRollupHorizon(store: Store): Promise<void> {
  await store.command(`ALTER TABLE rollup_state DELETE WHERE key IN ('${HORIZON_KEY}', '${INTENT_KEY}') SETTINGS mutations_sync = 1`);
}

/** A deduplication token that may sit in the statement's text: hex of what names the insert. */
function token(kind: string, tier: string, name: string): string {
  return `${kind}_${tier}_${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;
}

/**
 * The ticks of this process's engine: libchdb binds one engine per process, so every embedded store of the process
 * (services started side by side, as tests do) shares one horizon and one lock, through the store of whichever
 * holder is still open.
 */
let shared: { ticks: RollupTicks; holders: Store[]; started: Promise<void> } | undefined;

/**
 * The store every writer of runs uses with ROLLUPS=ticks: inserts into check_results go through the ticks (marked
 * and rolled), everything else to the engine as it is. Closing it lets go of the ticks (the last holder stops them).
 */
export async function storeWithRollupTicks(store: Store, opts: RollupTicksOptions): Promise<Store & { rollupTicks: RollupTicks }> {
  if (!shared) {
    const ticks = new RollupTicks(store, opts);
    shared = { ticks, holders: [store], started: ticks.start() };
  } else shared.holders.push(store);
  const held = shared;
  await held.started;
  const { ticks } = held;
  return {
    kind: store.kind,
    rollupTicks: ticks,
    query: (sql, params, options) => store.query(sql, params, options),
    queryWithStats: (sql, params, options) => store.queryWithStats(sql, params, options),
    command: (sql, params, options) => store.command(sql, params, options),
    insert: (table, columns, rows, options) => ticks.insert(table, columns, rows, options),
    settleLateRuns: (runs) => ticks.settle(runs),
    ping: () => store.ping(),
    async close() {
      held.holders = held.holders.filter((h) => h !== store);
      if (!held.holders.length) {
        if (shared === held) shared = undefined;
        await ticks.close();
      } else ticks.useStore(held.holders[0]);
      await store.close();
    },
  };
}
