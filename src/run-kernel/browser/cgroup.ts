import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A pids cgroup for one sandboxed run, where this process may make one: a hard cap on the tasks (processes and
 * threads) of the run, so a fork bomb stops at the cap instead of at the host's. cgroup v2 (the pids controller
 * enabled in this process's own cgroup, which must be writable: a systemd unit with `Delegate=yes`) or v1 (a
 * writable pids hierarchy, as root). Where neither is writable, the sandbox's watchdog counts the run's
 * processes instead (docs/browser-checks.md).
 */
export interface PidsCgroup {
  /** The directory whose `cgroup.procs` the run's first process joins. */
  dir: string;
  /** Removes the cgroup once its processes have ended (they may take a moment after a kill). */
  remove(): Promise<void>;
}

let base: string | null | undefined;

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where run cgroups go, found once: null when this process cannot make pids cgroups. */
function pidsBase(): string | null {
  if (base !== undefined) return base;
  base = null;
  try {
    const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
    const v1 = own.map((l) => l.split(':')).find((p) => p[1]?.split(',').includes('pids'));
    if (v1 && existsSync('/sys/fs/cgroup/pids/cgroup.procs')) {
      const dir = path.join('/sys/fs/cgroup/pids', v1[2] ?? '/');
      if (writable(dir)) base = dir;
      return base;
    }
    const v2 = own.find((l) => l.startsWith('0::'));
    if (v2 && existsSync('/sys/fs/cgroup/cgroup.controllers')) {
      const dir = path.join('/sys/fs/cgroup', v2.slice(3));
      // The controller must be available to children of this cgroup.
      if (writable(dir) && readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')) base = dir;
    }
  } catch {
    base = null;
  }
  return base;
}

/** A new pids cgroup capped at `maxTasks`, or null when this process cannot make one. */
export function pidsCgroup(maxTasks: number): PidsCgroup | null {
  const parent = pidsBase();
  if (!parent) return null;
  const dir = path.join(parent, `browser-run-${randomBytes(6).toString('hex')}`);
  try {
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'pids.max'), String(maxTasks));
  } catch {
    return null;
  }
  return {
    dir,
    remove: async () => {
      for (let i = 0; i < 40; i++) {
        try {
          rmdirSync(dir);
          return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    },
  };
}
