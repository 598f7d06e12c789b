import type { CheckType } from '../model/checks.js';

/**
 * The vocabulary of a run, what the service and the agent both speak (docs/architecture.md, the `run-kernel/` row of the folder order): the
 * check as it runs and the run job. The service makes them (runners/: definitions from Postgres, jobs on the
 * queues); the kernel and the agent only read them.
 */

/** A check as it runs: its group's settings applied, its variables merged (account < group < check). */
export interface RunnableCheck {
  id: string;
  accountId: string;
  name: string;
  checkType: CheckType;
  activated: boolean;
  tags: string[];
  groupId: number | null;
  /** The effective definition (request, assertions, thresholds, retryStrategy, scripts, …). */
  data: Record<string, unknown>;
  /** Name → value, for `{{VAR}}` and scripts' process.env. */
  variables: Record<string, string>;
  /** Values never to echo in results or logs. */
  secrets: string[];
  /** Run locations: public names and private location slugs. */
  locations: string[];
  runParallel: boolean;
  /** API checks: the setup and teardown scripts (the check's own, else its snippet's). */
  setupScript?: string;
  teardownScript?: string;
  /** Browser scripts that import `./snippets/…`: the account's snippets, by name. */
  snippets?: { name: string; script: string }[];
}

/** Why a run happens: the anchor's runSource values. */
/** Who asked for a run; EDITOR: a check's body tried before it is saved (`POST /v1/check-runs/{type}`, the console's "Run"). */
export type RunSource =
  | 'SCHEDULER'
  | 'SCHEDULE_NOW'
  | 'TRIGGER_API'
  | 'LEGACY_TRIGGER'
  | 'DEPLOYMENT'
  | 'CLI_DEPLOY'
  | 'TEST_RECORD'
  | 'TEST_NO_RECORD'
  | 'EDITOR';

/** One run of one check in one location, as a runner takes it from its location's queue. */
export interface RunJob {
  v: 1;
  accountId: string;
  checkId: string;
  location: string;
  /** The slot (epoch ms) a scheduled run belongs to, or when an on-demand run was asked for. */
  slot: number;
  /** 1 for the first try; each retry one more. */
  attempt: number;
  /** When the first try started (retries keep it, for maxDurationSeconds). */
  firstStartedAt?: number;
  /** The check session it reports to, for on-demand runs. */
  sessionId?: string;
  source: RunSource;
  /** The check's period (ms), for scheduled runs: a run later than this past its slot is too late to be worth running. */
  periodMs?: number;
  /** An ad-hoc run (`checkly test`, `trigger`): its row in adhoc_runs holds what to run (runners/adhoc.ts). */
  adhocId?: string;
  /** A retry made in another location: the location the slot's run started in (its result id is that location's). */
  origin?: string;
  /** The check's type, so an agent that cannot make it is passed over without the check being read (or an ad-hoc run started). */
  checkType?: CheckType;
}
