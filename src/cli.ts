import { parseArgs } from 'node:util';
import { ROLES, type Role } from './accounts/keys.js';
import { createAccount, createApiKey, findAccount, revokeApiKey, setAccountRateLimit } from './accounts/repository.js';
import { ConfigError, loadConfig } from './config.js';
import { migrate } from './storage/migrator.js';
import { connectPostgres, ensureDatabase, UnreachableError, type Sql } from './storage/postgres.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  migrate                                   apply pending Postgres migrations
  create-account --name NAME                create an account; prints its id
  create-key --account ID [--role ROLE] [--name NAME]
                                            create an API key (role: ${ROLES.join(', ')}; default read-write);
                                            prints the key once
  revoke-key --id KEY_ID                    revoke an API key
  set-rate-limit --account ID --points N --window SECONDS
                                            give an account its own rate limit (--points 0 restores the default)
  set-browser-limit --account ID (--max N | --unlimited)
                                            cap the number of browser checks of an account (402 past it)
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
      account: { type: 'string' },
      role: { type: 'string' },
      id: { type: 'string' },
      points: { type: 'string' },
      window: { type: 'string' },
      max: { type: 'string' },
      unlimited: { type: 'boolean' },
    },
    strict: true,
  });
  switch (command) {
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
        await sql`update accounts set browser_check_limit = ${max}, updated_at = now() where id = ${accountId}`;
      });
      console.log(max === null ? 'Browser checks unlimited' : `Browser checks limited to ${max}`);
      return;
    }
    default:
      throw new UsageError(command ? `Unknown command: ${command}` : 'No command given');
  }
}

run(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError) process.stderr.write(`${err.message}\n\n${USAGE}`);
  else if (err instanceof ConfigError || err instanceof UnreachableError) process.stderr.write(`${err.message}\n`);
  else if ((err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
  else process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
