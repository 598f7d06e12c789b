import { parseArgs } from 'node:util';
import { Presets, SingleBar } from 'cli-progress';
import {
  addMember,
  bootstrap,
  createAccount,
  createApiKey,
  ensureUser,
  findAccount,
  revokeApiKey,
  setAccountRateLimit,
  setBrowserCheckLimit,
  signInLink,
} from './accounts/index.js';
import { backfillRollups, rollupDdl, rollupMigration, TIERS } from './analytics/index.js';
import { ACCOUNT_ROLES, type AccountRole } from './model/accounts.js';
import { CREATABLE_TYPES, FREQUENCIES, LOCATIONS, type TypeSegment } from './model/checks.js';
import { ROLES, type Role } from './model/secrets.js';
import { ConfigError, loadConfig } from './platform/config.js';
import { createLogger } from './platform/logger.js';
import { rotateSecrets } from './secrets.js';
import type { SeedCheck } from './seed/generator.js';
import { createChecksOverHttp, HttpClient, seedOverHttp } from './seed/http.js';
import { createSeedChecks, type SeedPlan, seedBulk, totalRuns } from './seed/seeder.js';
import { closeDependencies, openDependencies } from './service.js';
import { Generations } from './storage/generations.js';
import { migrate } from './storage/migrator.js';
import { connectPostgres, ensureDatabase, type Sql, UnreachableError } from './storage/postgres.js';
import { newSecretsKey } from './storage/secret-box.js';
import { openSecrets, SecretsKeyError } from './storage/secret-keys.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  migrate                                   apply pending Postgres migrations
  new-secrets-key                           print a new key for SECRETS_KEY (32 random bytes, base64)
  rotate-secrets                            seal every stored secret with SECRETS_KEY (the old key in
                                            SECRETS_KEY_PREVIOUS); the last step of a key rotation
  create-account --name NAME                create an account; prints its id
  create-key --account ID [--role ROLE] [--name NAME]
                                            create an API key (role: ${ROLES.join(', ')}; default read-write);
                                            prints the key once
  revoke-key --id KEY_ID                    revoke an API key
  create-user --email EMAIL [--role ROLE] [--account ID] [--name NAME]
                                            make a person a member (role: ${ACCOUNT_ROLES.join(', ')}; default
                                            OWNER; account: the default one) and print a one-time sign-in link
                                            (valid 24 hours; PUBLIC_URL names where it points)
  set-rate-limit --account ID --points N --window SECONDS
                                            give an account its own rate limit (--points 0 restores the default)
  set-browser-limit --account ID (--max N | --unlimited)
                                            cap the number of browser checks of an account (402 past it)
  rollup-ddl [--add COLUMN,...]             print the rollup DDL as a new database gets it; with --add, the migration
                                            that adds new metric columns to existing rollups (a new sql/clickhouse file)
  backfill-rollups [--from DATE] [--to DATE]
                                            fill the rollups from runs stored before they existed (idempotent;
                                            safe while ingest runs; stop the service first in embedded mode)
  seed [--checks N] [--types api,icmp,...] [--days D] [--frequency MIN] [--locations L] [--seed S]
       [--account ID] [--http URL --key KEY] [--batch N]
                                            create N checks and generate D days of realistic results for
                                            them (deterministic per --seed). Default: straight into the store
                                            (stop the service first in embedded mode), then merged into
                                            one part per month; with --http: through
                                            the API. Prints a JSON summary.
`;

class UsageError extends Error {}

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

function positiveInt(raw: string, name: string, allowZero = false): number {
  if (!/^\d+$/.test(raw) || (!allowZero && Number(raw) === 0)) throw new UsageError(`--${name} must be a positive integer`);
  return Number(raw);
}

async function withDatabase<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
  const config = loadConfig();
  await ensureDatabase(config.databaseUrl);
  const sql = connectPostgres(config.databaseUrl, 2);
  try {
    await migrate(sql);
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 2 });
  }
}

async function requireAccount(sql: Sql, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id) || !(await findAccount(sql, id))) throw new UsageError(`No account with id ${id}`);
}

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      account: { type: 'string' },
      role: { type: 'string' },
      id: { type: 'string' },
      points: { type: 'string' },
      window: { type: 'string' },
      max: { type: 'string' },
      unlimited: { type: 'boolean' },
      checks: { type: 'string' },
      types: { type: 'string' },
      days: { type: 'string' },
      frequency: { type: 'string' },
      locations: { type: 'string' },
      seed: { type: 'string' },
      http: { type: 'string' },
      key: { type: 'string' },
      batch: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      add: { type: 'string' },
    },
    strict: true,
  });
  switch (command) {
    case 'rollup-ddl': {
      const added = values.add;
      process.stdout.write(
        added
          ? rollupMigration(
              String(added)
                .split(',')
                .map((c) => c.trim())
                .filter(Boolean),
            )
          : rollupDdl(),
      );
      return;
    }
    case 'new-secrets-key': {
      // A key for SECRETS_KEY: 32 random bytes, base64. Printed only; nothing is stored.
      process.stdout.write(`${newSecretsKey()}\n`);
      return;
    }
    case 'rotate-secrets': {
      // The rotation's last step: with SECRETS_KEY the new key and SECRETS_KEY_PREVIOUS the old one, every stored
      // secret is sealed anew with the new key.
      const counts = await withDatabase(async (sql) => {
        const opened = await openSecrets(sql, loadConfig().secrets);
        return { keyId: opened.box.currentId, sealed: await rotateSecrets(sql, opened.box) };
      });
      console.log(JSON.stringify(counts));
      return;
    }
    case 'migrate': {
      const applied = await withDatabase((sql) => migrate(sql));
      console.log(applied.length ? `Applied migrations ${applied.join(', ')}` : 'Nothing to apply');
      return;
    }
    case 'create-account': {
      const name = required(values, 'name');
      const account = await withDatabase((sql) => createAccount(sql, name));
      console.log(account.id);
      return;
    }
    case 'create-key': {
      const accountId = required(values, 'account');
      const role = (values.role ?? 'read-write') as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      const created = await withDatabase(async (sql) => {
        await requireAccount(sql, accountId);
        return createApiKey(sql, { accountId, role, name: values.name });
      });
      console.log(created.key);
      return;
    }
    case 'create-user': {
      const email = required(values, 'email').trim();
      if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 320) throw new UsageError('--email must be an email address');
      const role = ((values.role as string | undefined) ?? 'OWNER').toUpperCase() as AccountRole;
      if (!ACCOUNT_ROLES.includes(role)) throw new UsageError(`--role must be one of ${ACCOUNT_ROLES.join(', ')}`);
      const config = loadConfig();
      const link = await withDatabase(async (sql) => {
        let accountId = values.account as string | undefined;
        if (!accountId) {
          // Before the service's first start the default account is made here, as the start would make it.
          const first = await bootstrap(sql, config.bootstrapApiKey);
          if (first.generatedKey) console.log(`Created the default account; its admin API key (shown once): ${first.generatedKey}`);
          accountId = first.account.id;
        }
        await requireAccount(sql, accountId);
        const user = await ensureUser(sql, email, (values.name as string | undefined) ?? '');
        await addMember(sql, accountId, user.id, role);
        return signInLink(sql, config.publicUrl ?? `http://localhost:${config.port}`, user.id);
      });
      console.log(`${email} is ${role} of the account. Sign in once, within 24 hours, with:\n${link}`);
      return;
    }
    case 'revoke-key': {
      const id = required(values, 'id');
      await withDatabase((sql) => revokeApiKey(sql, id));
      console.log(`Revoked ${id}`);
      return;
    }
    case 'set-rate-limit': {
      const accountId = required(values, 'account');
      const points = positiveInt(required(values, 'points'), 'points', true);
      const windowSeconds = points === 0 ? 0 : positiveInt(required(values, 'window'), 'window');
      await withDatabase(async (sql) => {
        await requireAccount(sql, accountId);
        await setAccountRateLimit(sql, accountId, points === 0 ? null : { points, windowSeconds });
      });
      console.log('Rate limit updated');
      return;
    }
    case 'set-browser-limit': {
      const accountId = required(values, 'account');
      if (!values.unlimited && values.max === undefined) throw new UsageError('give --max N or --unlimited');
      const max = values.unlimited ? null : positiveInt(values.max as string, 'max', true);
      await withDatabase(async (sql) => {
        await requireAccount(sql, accountId);
        await setBrowserCheckLimit(sql, accountId, max);
      });
      console.log(max === null ? 'Browser checks unlimited' : `Browser checks limited to ${max}`);
      return;
    }
    case 'seed':
      await seed(values);
      return;
    case 'backfill-rollups':
      await backfill(values);
      return;
    default:
      throw new UsageError(command ? `Unknown command: ${command}` : 'No command given');
  }
}

async function backfill(values: Record<string, string | boolean | undefined>): Promise<void> {
  const day = (name: 'from' | 'to') => {
    const raw = values[name] as string | undefined;
    if (raw === undefined) return undefined;
    const ms = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(raw) : Number.NaN;
    if (Number.isNaN(ms)) throw new UsageError(`--${name} must be a date, YYYY-MM-DD`);
    return ms;
  };
  const range = { from: day('from'), to: day('to') };
  const config = loadConfig();
  const deps = await openDependencies(config, createLogger('warn'));
  const bar = new SingleBar({ format: 'backfill [{bar}] {percentage}% | {value}/{total} days', stream: process.stderr }, Presets.shades_classic);
  try {
    const started = performance.now();
    const result = await backfillRollups(deps.store, { ...range, onStart: (days) => bar.start(days, 0), onDay: () => bar.increment() });
    bar.stop();
    // Reports read rollups: every cached bucket goes (storage/generations.ts).
    await new Generations(deps.redis, config.redisPrefix).bumpEpoch();
    console.log(JSON.stringify({ ...result, seconds: Math.round((performance.now() - started) / 100) / 10 }));
  } finally {
    await closeDependencies(deps);
  }
}

async function seed(values: Record<string, string | boolean | undefined>): Promise<void> {
  const str = (name: string, fallback: string) => (values[name] as string | undefined) ?? fallback;
  const types = str('types', 'api').split(',') as TypeSegment[];
  for (const t of types) if (!(t in CREATABLE_TYPES)) throw new UsageError(`--types: unknown type ${t} (use ${Object.keys(CREATABLE_TYPES).join(', ')})`);
  const frequency = positiveInt(str('frequency', '10'), 'frequency');
  if (!(FREQUENCIES as readonly number[]).includes(frequency)) throw new UsageError(`--frequency must be one of ${FREQUENCIES.join(', ')}`);
  const plan: SeedPlan = {
    count: positiveInt(str('checks', '10'), 'checks'),
    types,
    frequency,
    locations: Math.min(LOCATIONS.length, positiveInt(str('locations', '4'), 'locations')),
  };
  const days = positiveInt(str('days', '1'), 'days');
  const to = Math.floor(Date.now() / 60_000) * 60_000;
  const window = { from: to - days * 86_400_000, to, seed: positiveInt(str('seed', '1'), 'seed', true) };
  const started = performance.now();
  const bar = new SingleBar({ format: 'seed [{bar}] {percentage}% | {value}/{total} rows | {speed} rows/s', stream: process.stderr }, Presets.shades_classic);
  const progress = (n: number) => {
    bar.increment(n, { speed: Math.round((bar.getProgress() * bar.getTotal()) / ((performance.now() - started) / 1000)) });
  };
  let checks: SeedCheck[];
  let rows: number;
  if (values.http) {
    const client = new HttpClient(String(values.http).replace(/\/$/, ''), required(values, 'key'));
    checks = await createChecksOverHttp(client, plan);
    bar.start(totalRuns(checks, window), 0, { speed: 0 });
    rows = await seedOverHttp(client, checks, window, { batchSize: positiveInt(str('batch', '1000'), 'batch'), concurrency: 4, onProgress: progress });
  } else {
    const config = loadConfig();
    const logger = createLogger('warn');
    const deps = await openDependencies(config, logger);
    try {
      const accountId = (values.account as string | undefined) ?? (await bootstrap(deps.sql, config.bootstrapApiKey)).account.id;
      await requireAccount(deps.sql, accountId);
      checks = await createSeedChecks(deps.sql, accountId, plan);
      bar.start(totalRuns(checks, window), 0, { speed: 0 });
      rows = await seedBulk(deps.store, accountId, checks, window, progress);
      // Bulk blocks land as many small parts; merge them now rather than leave the background merges
      // to compete with the first reads (history this old would long be merged in a live system).
      await deps.store.command('OPTIMIZE TABLE check_results FINAL');
      for (const tier of TIERS) await deps.store.command(`OPTIMIZE TABLE ${tier.table} FINAL`);
    } finally {
      await closeDependencies(deps);
    }
  }
  bar.stop();
  const seconds = (performance.now() - started) / 1000;
  console.log(
    JSON.stringify({
      checks: checks.map((c) => ({ id: c.id, checkType: c.checkType })),
      from: window.from,
      to: window.to,
      rows,
      seconds: Math.round(seconds * 10) / 10,
      rowsPerSecond: Math.round(rows / seconds),
    }),
  );
}

run(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError) process.stderr.write(`${err.message}\n\n${USAGE}`);
  else if (err instanceof ConfigError || err instanceof UnreachableError || err instanceof SecretsKeyError) process.stderr.write(`${err.message}\n`);
  else if ((err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
  else process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
