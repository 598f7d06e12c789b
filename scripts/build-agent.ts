// `npm run agent:build`: the agent as a package of its own (docs/agent.md, "Install"). dist/agent/ holds one
// bundled agent.mjs (esbuild: the agent and every library it loads, nothing of the service's), the one native
// piece it cannot bundle (isolated-vm, stripped, for setup and teardown scripts), a package.json whose version is
// the agent's, and install-browser.sh (the opt-in for browser checks). dist/monitoring-agent-<version>.tgz is the
// same folder as one file to copy.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';
import { AGENT_VERSION } from '../src/model/agent.js';

const root = path.resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
/** Loaded at run time from beside agent.mjs: a native module, and Playwright (installed only for browser checks). */
const EXTERNAL = ['isolated-vm', '@playwright/test', 'playwright', 'playwright-core'];

export async function buildAgent(dist = path.join(root, 'dist')): Promise<{ dir: string; tarball: string }> {
  const dir = path.join(dist, 'agent');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await build({
    entryPoints: [path.join(root, 'agent/main.ts')],
    outfile: path.join(dir, 'agent.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    keepNames: true,
    legalComments: 'linked',
    external: EXTERNAL,
    // The libraries are CommonJS: their `require` of Node's own modules needs one in an ES module.
    banner: { js: "#!/usr/bin/env node\nimport { createRequire as __agentRequire } from 'node:module'; const require = __agentRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  chmodSync(path.join(dir, 'agent.mjs'), 0o755);

  // isolated-vm: its loader, its licence and its addon, stripped of debug symbols (26 MB → about 2 MB).
  const ivm = path.dirname(require.resolve('isolated-vm/package.json'));
  const ivmOut = path.join(dir, 'node_modules/isolated-vm');
  mkdirSync(path.join(ivmOut, 'out'), { recursive: true });
  const ivmPackage = JSON.parse(readFileSync(path.join(ivm, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(
    path.join(ivmOut, 'package.json'),
    `${JSON.stringify({ name: ivmPackage.name, version: ivmPackage.version, main: ivmPackage.main, license: ivmPackage.license }, null, 2)}\n`,
  );
  for (const file of ['isolated-vm.js', 'LICENSE']) copyFileSync(path.join(ivm, file), path.join(ivmOut, file));
  const addon = path.join(ivmOut, 'out/isolated_vm.node');
  copyFileSync(path.join(ivm, 'out/isolated_vm.node'), addon);
  try {
    execFileSync('strip', ['--strip-unneeded', addon]);
  } catch {
    // no binutils: the addon works unstripped, only larger
  }

  const playwright = (JSON.parse(readFileSync(require.resolve('@playwright/test/package.json'), 'utf8')) as { version: string }).version;
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify(
      {
        name: 'monitoring-agent',
        version: AGENT_VERSION,
        description: "A private location's agent: runs its checks and reports to the monitoring service over HTTPS",
        type: 'module',
        bin: { 'monitoring-agent': 'agent.mjs' },
        engines: { node: '>=20' },
        nodeAbi: process.versions.modules,
        optionalDependencies: { '@playwright/test': playwright },
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(
    path.join(dir, 'install-browser.sh'),
    `#!/usr/bin/env bash
# Browser checks on this agent: Debian's Chromium and bubblewrap (root), and Playwright ${playwright} beside agent.mjs.
# The agent says at start whether it can run them ("browserChecks" in its first log line) and leases only what it can.
set -euo pipefail
here="$(cd "$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
$sudo apt-get update -qq
$sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap chromium chromium-headless-shell
npm install --prefix "$here" --no-save --no-audit --no-fund --omit=dev @playwright/test@${playwright}
`,
  );
  chmodSync(path.join(dir, 'install-browser.sh'), 0o755);

  const tarball = path.join(dist, `monitoring-agent-${AGENT_VERSION}.tgz`);
  execFileSync('tar', ['-czf', tarball, '-C', dist, 'agent']);
  return { dir, tarball };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { dir, tarball } = await buildAgent();
  const size = (file: string) => `${(statSync(file).size / 1024 / 1024).toFixed(1)} MB`;
  process.stdout.write(`${dir}: agent.mjs ${size(path.join(dir, 'agent.mjs'))}, isolated-vm ${size(path.join(dir, 'node_modules/isolated-vm/out/isolated_vm.node'))}\n${tarball}: ${size(tarball)}\n`);
}
