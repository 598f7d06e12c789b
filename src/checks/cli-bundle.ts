/**
 * A check as the anchor's CLI synthesizes it (a deploy resource's payload, a `checkly test` job) turned into a
 * check body this service's schemas take. Shared by project deploys and ad-hoc runs.
 */

/** Fields only the CLI's bundler reads (script file paths and their dependency lists). */
const BUILD_ONLY = ['setupScriptPath', 'setupScriptDependencies', 'tearDownScriptPath', 'tearDownScriptDependencies'];

export interface SharedFile {
  path: string;
  content: string;
}

/**
 * The body, or the problem with it (named by field): `dependencies` given as indexes into `sharedFiles` become
 * those files, and an intent's typed constraints become the two lists checks keep.
 */
export function cliCheckBody(payload: Record<string, unknown>, sharedFiles: readonly SharedFile[]): { body: Record<string, unknown> } | { problem: string } {
  const body = { ...payload };
  for (const field of BUILD_ONLY) delete body[field];
  if (Array.isArray(body.dependencies)) {
    const resolved: unknown[] = [];
    for (const [i, dep] of body.dependencies.entries()) {
      if (typeof dep !== 'number') {
        resolved.push(dep);
        continue;
      }
      const file = sharedFiles[dep];
      if (!file) return { problem: `dependencies[${i}] names sharedFiles[${dep}], which the body does not have` };
      resolved.push({ path: file.path, content: file.content });
    }
    body.dependencies = resolved;
  }
  const intent = body.intent as { constraints?: { type: string; statement: string }[] } | null | undefined;
  if (intent?.constraints) {
    const { constraints, ...rest } = intent;
    body.intent = {
      ...rest,
      requiredOutcomes: constraints.filter((c) => c.type === 'REQUIRED_OUTCOME').map((c) => c.statement),
      mustPreserve: constraints.filter((c) => c.type === 'MUST_PRESERVE').map((c) => c.statement),
    };
  }
  return { body };
}
