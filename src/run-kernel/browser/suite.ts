import path from 'node:path';

/**
 * A PLAYWRIGHT check suite's `testCommand`, as the anchor's CLI writes it (`npx playwright test --config <path>
 * [--project …] [--grep …]`, or the same through pnpm, yarn or bun), read into what the sandbox runs: the config
 * path and Playwright's own arguments. This service runs `playwright test` only (docs/browser-checks.md): any other
 * command is refused with a reason; options that would change where reports go or how many workers run are the
 * sandbox's and are dropped.
 */

/** Words of a shell command line: quotes and backslashes as sh reads them; no expansion, no operators. */
export function shellWords(line: string): string[] | null {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return null;
      word += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '"\\$`'.includes(line[j + 1]!)) j++;
        word += line[j];
      }
      if (j >= line.length) return null;
      i = j;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else if (';&|<>`$()'.includes(c)) {
      return null;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** What runs a package's binary, before `playwright test`. */
const RUNNERS = [
  ['npx'],
  ['npx', '--yes'],
  ['npx', '-y'],
  ['pnpm', 'exec'],
  ['pnpm'],
  ['pnpm', 'dlx'],
  ['yarn'],
  ['yarn', 'exec'],
  ['bunx'],
  ['bun', 'x'],
  ['npm', 'exec', '--'],
  [],
];
/** Options the sandbox decides (value-taking ones drop their value too). */
const DROPPED_WITH_VALUE = new Set(['--reporter', '--output', '--workers', '-j', '--shard', '--ui-host', '--ui-port', '--trace']);
const DROPPED = new Set(['--ui', '--debug', '--headed', '--list', '--update-snapshots', '-u', '--fully-parallel', '--pass-with-no-tests', '--only-changed']);

export type TestCommand = { ok: true; config: string; args: string[] } | { ok: false; why: string };

/** `testCommand` read against `workingDir` (both as the check stores them); paths are the bundle's, posix. */
export function readTestCommand(testCommand: string | null | undefined, workingDir: string | null | undefined): TestCommand {
  const command = (testCommand ?? '').trim() || 'npx playwright test';
  const words = shellWords(command);
  if (!words) return { ok: false, why: `testCommand "${command}" is not a single command: this service runs "playwright test" with its options` };
  const at = words.findIndex((w, i) => w === 'playwright' && words[i + 1] === 'test');
  if (at < 0 || !RUNNERS.some((r) => r.length === at && r.every((w, i) => words[i] === w))) {
    return { ok: false, why: `testCommand "${command}" is not supported: this service runs "npx playwright test [options]" (or through pnpm, yarn or bun)` };
  }
  let config: string | undefined;
  const args: string[] = [];
  const rest = words.slice(at + 2);
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    const [flag, inline] =
      word.startsWith('--') && word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
    if (flag === '--config' || flag === '-c') {
      config = inline ?? rest[++i];
    } else if (DROPPED_WITH_VALUE.has(flag)) {
      if (inline === undefined) i++;
    } else if (!DROPPED.has(flag)) {
      args.push(word);
    }
  }
  const cwd = path.posix.normalize((workingDir ?? '.').replace(/\\/g, '/') || '.');
  return { ok: true, config: path.posix.join(cwd, config ?? 'playwright.config.ts'), args };
}
