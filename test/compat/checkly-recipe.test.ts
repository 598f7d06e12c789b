import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { type HttpTarget, startHttpTarget } from '../support/targets.js';

/**
 * The README's recipe for the SaaS's CLI: `npm run checkly -- <command>` (scripts/checkly.mjs) from a project folder
 * that installs nothing, on the machine's own Node, with only the service's address and a key given.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SAMPLE = path.join(ROOT, 'test/compat/projects/shop');
const run = promisify(execFile);

describe('npm run checkly: the anchor CLI from any project folder', { timeout: 180_000 }, () => {
  let svc: TestService;
  let target: HttpTarget;
  let home: string;
  let project: string;

  /** What `npm --prefix <service> run checkly -- …` does from the project folder: npm sets INIT_CWD to it. */
  const checkly = async (args: string[], env: NodeJS.ProcessEnv) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [path.join(ROOT, 'scripts/checkly.mjs'), ...args], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          XDG_CONFIG_HOME: path.join(home, 'config'),
          CI: '1',
          NO_COLOR: '1',
          INIT_CWD: project,
          SHOP_URL: target.url,
          ...env,
        },
        timeout: 150_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      return { code: 0, out: stdout + stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  };

  beforeAll(async () => {
    svc = await startTestService();
    target = await startHttpTarget();
    home = mkdtempSync(path.join(os.tmpdir(), 'checkly-recipe-'));
    project = path.join(home, 'shop');
    cpSync(SAMPLE, project, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await target?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("deploys a project that has no node_modules, given only the service's address and a key", async () => {
    expect(existsSync(path.join(project, 'node_modules'))).toBe(false);
    const preview = await checkly(['deploy', '--preview'], { CHECKLY_API_URL: svc.url, CHECKLY_API_KEY: svc.adminKey });
    expect(preview.code, preview.out).toBe(0);
    expect(preview.out).toContain('ApiCheck: shop-health');
    const deployed = await checkly(['deploy', '--force'], { CHECKLY_API_URL: svc.url, CHECKLY_API_KEY: svc.adminKey });
    expect(deployed.code, deployed.out).toBe(0);
    const names = ((await svc.call('GET', '/v1/checks?limit=100')).body as { name: string }[]).map((c) => c.name);
    expect(names.length).toBeGreaterThan(3);
    // Nothing was written into the project to make it work.
    expect(existsSync(path.join(project, 'node_modules'))).toBe(false);
  });

  it('says what is missing: the key, or a service that answers', async () => {
    const noKey = await checkly(['deploy', '--preview'], { CHECKLY_API_URL: svc.url });
    expect(noKey.code).toBe(2);
    expect(noKey.out).toMatch(/set CHECKLY_API_KEY to a key of this service/);
    const wrongKey = await checkly(['deploy', '--preview'], { CHECKLY_API_URL: svc.url, CHECKLY_API_KEY: 'mk_wrong' });
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.out).toMatch(/refused the key: 401 Bad Token \(This key is not valid here/);
    const bad = await checkly(['deploy', '--preview'], { CHECKLY_API_URL: 'localhost 3000', CHECKLY_API_KEY: svc.adminKey });
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/CHECKLY_API_URL \(or PUBLIC_URL\) is not a URL/);
    const down = await checkly(['deploy', '--preview'], { CHECKLY_API_URL: 'http://127.0.0.1:9', CHECKLY_API_KEY: svc.adminKey });
    expect(down.code).toBe(2);
    expect(down.out).toMatch(/does not answer at http:\/\/127\.0\.0\.1:9 \(.+\): start it \(npm start\) or set CHECKLY_API_URL/);
  });
});
