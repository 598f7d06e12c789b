import { AsyncLocalStorage } from 'node:async_hooks';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { type Dispatcher, EnvHttpProxyAgent, fetch } from 'undici';
import { AGENT_PROTOCOL, AGENT_VERSION } from '../src/model/agent.js';
import type { CheckType } from '../src/model/checks.js';
import type { Logger } from '../src/platform/logger.js';
import {
  type ExecuteRun,
  type FileAnswer,
  type LeaseRequest,
  type LeasesAnswer,
  type LeaseWire,
  type MadeAnswer,
  messageOf,
  type OutcomesAnswer,
  type OutcomesRequest,
  type RegisterAnswer,
  type RegisterRequest,
  type RenewAnswer,
  type RenewRequest,
  type RunFiles,
  type RunJob,
  type RunnerPort,
  type RunOutcome,
  scheduledResultId,
  type TakenRun,
} from '../src/run-kernel/index.js';
import { type DiskBuffer, RefusedBatch } from './buffer.js';
import type { ScheduleMemory } from './memory.js';

export interface HttpPortOptions {
  apiUrl: string;
  apiKey: string;
  agentId: string;
  capabilities: CheckType[];
  concurrency: number;
  egressIps: string[];
  /** Unreachable this long: run from memory and keep results in the buffer. */
  offlineAfterMs: number;
  buffer: DiskBuffer;
  memory: ScheduleMemory;
  logger: Logger;
  /** Counts what the agent does, for its /metrics. */
  count?: (event: AgentEvent, n?: number) => void;
}

export type AgentEvent = 'leased' | 'reported' | 'lost' | 'made-offline' | 'buffered' | 'delivered' | 'set-aside' | 'api-error' | 'expired-unreported';

/** The service answered, but not with what the call needs: not a network failure (no offline mode for it). */
export class ServiceRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }
}

/** How long leasing waits for the buffer's delivery before it goes on regardless (the delivery goes on too). */
const DELIVERY_FIRST_MS = 5000;

/** How long one file upload may take. */
const UPLOAD_TIMEOUT_MS = 10 * 60_000;

/** Which lease a run's file upload belongs to: set around each leased run's execution. */
const currentLease = new AsyncLocalStorage<string | undefined>();

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The runner port of an agent: the service over HTTPS (through HTTPS_PROXY when set), with the location's key.
 * It registers, leases runs as slots free up, renews the leases of runs in flight, reports outcomes in batches,
 * and uploads the files runs keep. When the service has been unreachable for `offlineAfterMs` it goes on from
 * memory: the scheduled checks it last leased run at their slots and their results go to the disk buffer, which
 * is delivered (oldest first, exactly once per slot at the service) as soon as the service answers again.
 */
export class HttpPort implements RunnerPort {
  private readonly dispatcher: Dispatcher = new EnvHttpProxyAgent();
  private readonly stop = new AbortController();
  private readonly inFlight = new Map<string, { taken: TakenRun; lost: boolean }>();
  private running = 0;
  private pending: { leaseId: string; outcome: RunOutcome; taken: TakenRun; expiresAt: number }[] = [];
  private unreachableSince: number | undefined;
  /**
   * Set when a probe ends offline mode, cleared by the first call the service takes (a 2xx): a failure meanwhile puts
   * the agent back offline at once, so a service that answers probes but not leases does not make it flap.
   */
  private probation = false;
  private loops: Promise<void>[] = [];
  registered = false;
  leaseMs = 300_000;
  /** The service answered the last try to deliver the buffer but did not take it (not a refusal of results): not ready while so. */
  drainFailing = false;
  /** Whether the agent is running from memory now. */
  get offline(): boolean {
    return this.unreachableSince !== undefined && Date.now() - this.unreachableSince >= this.opts.offlineAfterMs;
  }

  readonly files: RunFiles;

  constructor(private readonly opts: HttpPortOptions) {
    this.files = {
      put: async (_accountId, kind, body, maxBytes) => {
        const leaseId = currentLease.getStore();
        if (!leaseId) throw new Error('files are not kept for a run made while the service was unreachable');
        const res = await this.call('PUT', `/v1/agent/leases/${leaseId}/files/${kind}`, body, 'application/octet-stream', UPLOAD_TIMEOUT_MS);
        void maxBytes; // the service holds a file to the same limit
        return res as FileAnswer;
      },
      open: async () => {
        const leaseId = currentLease.getStore();
        if (!leaseId) return undefined;
        const res = await fetch(`${this.opts.apiUrl}/v1/agent/leases/${leaseId}/bundle`, {
          headers: this.headers(),
          dispatcher: this.dispatcher,
          signal: AbortSignal.timeout(120_000),
        });
        if (res.status === 404) return undefined;
        if (!res.ok || !res.body) throw new Error(`the service answered ${res.status} for the code bundle`);
        return { stream: Readable.fromWeb(res.body as WebReadableStream), size: Number(res.headers.get('content-length') ?? 0) };
      },
    };
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.opts.apiKey}`, 'user-agent': `monitoring-agent/${AGENT_VERSION}` };
  }

  /** One call to the service. A network failure or 5xx marks it unreachable; a 4xx is a ServiceRefusal. */
  private async call(
    method: string,
    urlPath: string,
    body: unknown,
    contentType = 'application/json',
    timeoutMs = 60_000,
    signal?: AbortSignal,
  ): Promise<unknown> {
    let res: Awaited<ReturnType<typeof fetch>>;
    try {
      res = await fetch(`${this.opts.apiUrl}${urlPath}`, {
        method,
        headers: { ...this.headers(), 'content-type': contentType },
        body: body instanceof Readable ? (body as unknown as ReadableStream) : JSON.stringify(body),
        ...(body instanceof Readable ? { duplex: 'half' as const } : {}),
        dispatcher: this.dispatcher,
        signal: signal ? AbortSignal.any([AbortSignal.timeout(Math.max(30_000, timeoutMs)), signal]) : AbortSignal.timeout(Math.max(30_000, timeoutMs)),
      });
    } catch (err) {
      if (!signal?.aborted) this.unreachable();
      throw err;
    }
    const text = await res.text();
    if (res.status >= 500) {
      this.unreachable();
      throw new Error(`the service answered ${res.status}`);
    }
    const ending = this.offline;
    this.reachable();
    // The call that ends offline mode is the probe: only a later call the service takes ends the probation.
    if (res.ok && !ending) this.probation = false;
    let parsed: { message?: string; attributes?: { reason?: string } } | undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (res.status >= 400) throw new ServiceRefusal(res.status, parsed?.message ?? `the service answered ${res.status}`, parsed?.attributes?.reason);
    return parsed;
  }

  private unreachable(): void {
    this.opts.count?.('api-error');
    if (this.probation) {
      this.probation = false;
      this.unreachableSince = Date.now() - this.opts.offlineAfterMs;
      this.opts.logger.warn('the service answered a probe but not the next call: running from memory again');
    } else if (this.unreachableSince === undefined) this.unreachableSince = Date.now();
  }

  private reachable(): void {
    if (this.unreachableSince !== undefined && this.offline) this.probation = true;
    if (this.unreachableSince !== undefined && this.offline)
      this.opts.logger.info(
        { offlineSeconds: Math.round((Date.now() - this.unreachableSince) / 1000) },
        'the service answers again; delivering what was made meanwhile',
      );
    this.unreachableSince = undefined;
  }

  async register(): Promise<void> {
    const answer = (await this.call('POST', '/v1/agent/register', {
      protocol: AGENT_PROTOCOL,
      agentId: this.opts.agentId,
      version: AGENT_VERSION,
      capabilities: this.opts.capabilities,
      concurrency: this.opts.concurrency,
      ...(this.opts.egressIps.length ? { egressIps: this.opts.egressIps } : {}),
    } satisfies RegisterRequest)) as RegisterAnswer;
    this.leaseMs = answer.leaseSeconds * 1000;
    this.registered = true;
    this.opts.logger.info(
      {
        location: answer.location.slugName,
        leaseSeconds: answer.leaseSeconds,
        version: AGENT_VERSION,
        ...(answer.isOutdated ? { outdated: true, minAgentVersion: answer.minAgentVersion } : {}),
      },
      'agent registered',
    );
  }

  /** Runs `work` in the background and keeps its promise for close. */
  private loop(work: () => Promise<void>): void {
    this.loops.push(work());
  }

  serve(execute: ExecuteRun): void {
    this.loop(() => this.leaseLoop(execute));
    this.loop(() => this.renewLoop());
    this.loop(() => this.reportLoop());
    this.loop(() => this.offlineLoop(execute));
    this.loop(() => this.deliverLoop());
  }

  /** The delivery under way, and when it began. */
  private delivering: { done: Promise<void>; since: number } | undefined;

  /** Starts a delivery of the buffer, or answers the one under way. */
  private deliverOnce(): Promise<void> {
    if (!this.delivering) {
      const done = this.deliverBuffer().finally(() => {
        this.delivering = undefined;
      });
      this.delivering = { done, since: Date.now() };
    }
    return this.delivering.done;
  }

  /** Waits for the buffer's delivery, up to DELIVERY_FIRST_MS from when it began. */
  private async deliveredFirst(): Promise<void> {
    const done = this.deliverOnce();
    const left = this.delivering ? this.delivering.since + DELIVERY_FIRST_MS - Date.now() : 0;
    if (left > 0) await Promise.race([done, sleep(left, this.stop.signal)]);
  }

  /**
   * Delivers what was made while cut off, from a loop of its own: a buffer the service is slow to take, or does not
   * take, never stops leasing (readiness says so instead). Tries again at growing intervals while it fails.
   */
  private async deliverLoop(): Promise<void> {
    let wait = 100;
    while (!this.stop.signal.aborted) {
      if (this.registered && !this.offline && this.opts.buffer.stats.results) {
        await this.deliverOnce();
        // Still results left: the service did not take them (or is unreachable); try again less often.
        wait = this.opts.buffer.stats.results ? Math.min(30_000, Math.max(1000, wait * 2)) : 100;
      }
      await sleep(wait, this.stop.signal);
    }
  }

  get free(): number {
    return this.opts.concurrency - this.running;
  }

  private async leaseLoop(execute: ExecuteRun): Promise<void> {
    let backoff = 500;
    while (!this.stop.signal.aborted) {
      try {
        if (!this.registered) await this.register();
        if (this.free <= 0 || this.offline) {
          await sleep(this.offline ? 1000 : 50, this.stop.signal);
          if (this.offline) await this.call('POST', '/v1/agent/register', null).catch(() => undefined); // a probe: any answer ends offline
          continue;
        }
        // What was made while cut off goes first: the service's catch-up runs of the same slots would otherwise land
        // before the results made at the slots' own times. A delivery that takes long (a slow or refusing service) holds
        // leasing up for at most DELIVERY_FIRST_MS; it goes on in its own loop meanwhile.
        if (this.opts.buffer.stats.results && !this.drainFailing) await this.deliveredFirst();
        const { leases } = (await this.call(
          'POST',
          '/v1/agent/leases',
          { agentId: this.opts.agentId, max: this.free, waitSeconds: 10 } satisfies LeaseRequest,
          'application/json',
          60_000,
          this.stop.signal,
        )) as LeasesAnswer;
        backoff = 500;
        this.opts.memory.forgetStale();
        for (const lease of leases) this.start(lease, execute);
      } catch (err) {
        if (err instanceof ServiceRefusal) {
          if (err.reason === 'not-registered') this.registered = false;
          else if (err.status === 401)
            this.opts.logger.error({ err: err.message }, 'the service refuses this key: it was revoked or mistyped; no runs are taken');
          else this.opts.logger.warn({ status: err.status, err: err.message }, 'the service refused a lease call');
        } else if (!this.stop.signal.aborted) this.opts.logger.warn({ err: messageOf(err) }, 'the service is unreachable; trying again');
        await sleep(backoff, this.stop.signal);
        backoff = Math.min(5000, backoff * 2);
      }
    }
  }

  private start(lease: LeaseWire, execute: ExecuteRun): void {
    const taken: TakenRun = { run: lease.run, check: lease.check, resultId: lease.resultId, ...(lease.assetBase ? { assetBase: lease.assetBase } : {}) };
    this.opts.memory.remember(lease.run, lease.check, Date.now(), lease.holders ?? []);
    this.opts.count?.('leased');
    this.running++;
    const entry = { taken, lost: false };
    this.inFlight.set(lease.leaseId, entry);
    void currentLease
      .run(lease.leaseId, () => execute(taken))
      .then((outcome) => {
        this.inFlight.delete(lease.leaseId);
        if (entry.lost) {
          this.opts.count?.('lost');
          this.opts.logger.warn({ checkId: taken.run.checkId }, 'a run outlived its lease (another agent makes it); its outcome is not reported');
          return;
        }
        this.pending.push({ leaseId: lease.leaseId, outcome, taken, expiresAt: Date.now() + this.leaseMs });
      })
      .finally(() => this.running--);
  }

  /** Renews the leases in flight (and of outcomes not yet reported) every third of a lease. */
  private async renewLoop(): Promise<void> {
    let last = Date.now();
    while (!this.stop.signal.aborted) {
      await sleep(200, this.stop.signal);
      if (Date.now() - last < this.leaseMs / 3) continue;
      last = Date.now();
      const ids = [...this.inFlight.keys(), ...this.pending.map((p) => p.leaseId)];
      for (let i = 0; i < ids.length; i += 20) {
        try {
          const { lost } = (await this.call('POST', '/v1/agent/leases/renew', {
            agentId: this.opts.agentId,
            leaseIds: ids.slice(i, i + 20),
          } satisfies RenewRequest)) as RenewAnswer;
          for (const id of lost) {
            const run = this.inFlight.get(id);
            if (run) run.lost = true;
          }
        } catch {
          // unreachable or refused: the leases lapse on their own; outcomes of scheduled runs go to the buffer
        }
      }
    }
  }

  private closeDeadline = Infinity;

  /** Reports outcomes as they come; when stopping, until the runs in flight have ended and been reported (or the deadline). */
  private async reportLoop(): Promise<void> {
    while (!this.stop.signal.aborted || ((this.pending.length || this.running > 0) && Date.now() < this.closeDeadline)) {
      if (!this.pending.length) {
        await sleep(50, this.stop.signal.aborted ? undefined : this.stop.signal);
        continue;
      }
      await this.reportPending();
      if (this.pending.length) await sleep(500);
    }
  }

  /** Reports what is pending; what cannot be reported goes to the buffer (scheduled runs) or waits. */
  private async reportPending(): Promise<void> {
    const batch = this.pending.splice(0, 100);
    try {
      const { outcomes } = (await this.call('POST', '/v1/agent/outcomes', {
        agentId: this.opts.agentId,
        outcomes: batch.map((p) => ({ leaseId: p.leaseId, outcome: p.outcome as OutcomesRequest['outcomes'][number]['outcome'] })),
      } satisfies OutcomesRequest)) as OutcomesAnswer;
      for (const o of outcomes) this.opts.count?.(o.state === 'done' || o.state === 'duplicate' ? 'reported' : 'lost');
      if (outcomes.some((o) => o.state === 'refused'))
        this.opts.logger.warn(
          { refused: outcomes.filter((o) => o.state === 'refused').length },
          "the service refused outcomes whose times it cannot believe: check this machine's clock",
        );
    } catch (err) {
      if (err instanceof ServiceRefusal && err.reason === 'not-registered') this.registered = false;
      const keep: typeof batch = [];
      for (const p of batch) {
        if (p.taken.run.source === 'SCHEDULER' && !p.taken.run.adhocId) this.bufferMade(p.taken.run, p.outcome);
        else if (Date.now() < p.expiresAt) keep.push(p);
        else this.opts.count?.('expired-unreported');
      }
      this.pending.unshift(...keep);
    }
  }

  private bufferMade(run: RunJob, outcome: RunOutcome): void {
    try {
      this.opts.buffer.add([
        {
          checkId: run.checkId,
          location: run.location,
          slot: run.slot,
          ...(run.periodMs ? { periodMs: run.periodMs } : {}),
          outcome: outcome as unknown as Record<string, unknown>,
        },
      ]);
      this.opts.count?.('buffered');
    } catch (err) {
      // A full or unwritable disk: the result is lost, counted and said, and the agent goes on.
      this.opts.count?.('lost');
      this.opts.logger.error({ checkId: run.checkId, err: messageOf(err) }, 'could not keep a result in the buffer; it is lost');
    }
  }

  /**
   * Delivers the buffer. Results the service refuses (one by one in its answer, or a whole batch with a 400: a
   * version skew, a result it cannot take) are set aside on disk and counted, never sent again; anything else that
   * fails leaves the buffer as it is, for the next try, and the agent not ready meanwhile.
   */
  private async deliverBuffer(): Promise<void> {
    let n: number;
    try {
      n = await this.opts.buffer.drain(async (results) => {
        let answer: MadeAnswer;
        try {
          answer = (await this.call(
            'POST',
            '/v1/agent/made',
            { agentId: this.opts.agentId, results },
            'application/json',
            60_000,
            this.stop.signal,
          )) as MadeAnswer;
        } catch (err) {
          if (err instanceof ServiceRefusal && (err.status === 400 || err.status === 413)) {
            this.opts.count?.('set-aside', results.length);
            this.opts.logger.error(
              { results: results.length, status: err.status, err: err.message },
              'the service refused a batch of results made while cut off: set aside (refused/), going on',
            );
            throw new RefusedBatch(`${err.status}: ${err.message}`);
          }
          throw err;
        }
        for (const r of answer.refused) this.opts.buffer.setAside([results[r.index]!].filter(Boolean), r.reason);
        if (answer.refused.length) {
          this.opts.count?.('set-aside', answer.refused.length);
          this.opts.logger.warn(
            { refused: answer.refused.length, first: answer.refused[0]?.reason },
            'the service refused results made while cut off: set aside (refused/)',
          );
        }
      });
    } catch (err) {
      // The service answered and did not take it: not ready until it does. Unreachable (or a 5xx) is offline's business.
      if (err instanceof ServiceRefusal) this.drainFailing = true;
      this.opts.logger.warn(
        { err: messageOf(err), buffered: this.opts.buffer.stats.results },
        'could not deliver the results made while cut off; trying again',
      );
      return;
    }
    this.drainFailing = false;
    if (n) {
      this.opts.count?.('delivered', n);
      this.opts.logger.info({ results: n }, 'results made while cut off delivered');
    }
  }

  /** While cut off: the remembered checks run at their slots; each result goes to the buffer. */
  private async offlineLoop(execute: ExecuteRun): Promise<void> {
    let announced = false;
    while (!this.stop.signal.aborted) {
      await sleep(250, this.stop.signal);
      if (!this.offline) {
        announced = false;
        continue;
      }
      if (!announced) {
        announced = true;
        this.opts.logger.warn(
          { checks: this.opts.memory.size },
          'the service is unreachable: running the checks last leased from memory, keeping results on disk',
        );
      }
      for (const { run, check } of this.opts.memory.due(Date.now(), this.opts.agentId)) {
        if (this.free <= 0) {
          this.opts.count?.('lost');
          this.opts.logger.warn({ checkId: run.checkId }, 'no free slot for a run from memory; skipped');
          continue;
        }
        this.running++;
        const taken: TakenRun = { run, check, resultId: scheduledResultId(run.checkId, run.slot, run.location) };
        void currentLease
          .run(undefined, () => execute(taken))
          .then((outcome) => {
            this.bufferMade(run, outcome);
            this.opts.count?.('made-offline');
          })
          .finally(() => this.running--);
      }
    }
  }

  /** Stops taking runs, lets the runs in flight finish (up to `graceMs`) and reports them. */
  async close(graceMs = 30_000): Promise<void> {
    const deadline = Date.now() + graceMs;
    this.closeDeadline = deadline;
    this.stop.abort();
    while (this.running > 0 && Date.now() < deadline) await sleep(100);
    await Promise.race([Promise.allSettled(this.loops), sleep(Math.max(1000, deadline - Date.now()))]);
    this.opts.buffer.close();
    await this.dispatcher.close().catch(() => undefined);
  }
}
