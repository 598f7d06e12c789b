/**
 * The agent protocol (docs/agent.md): its version, and the version of the agent this service ships. A change
 * an older agent cannot follow raises AGENT_PROTOCOL; an agent speaking another one is refused at register.
 */
export const AGENT_PROTOCOL = 1;
export const AGENT_VERSION = '1.0.0';

/** Compares dotted versions numerically (1.10.0 > 1.9.2); a part that is not a number counts as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a
    .split(/[.+-]/)
    .slice(0, 3)
    .map((p) => Number.parseInt(p, 10) || 0);
  const pb = b
    .split(/[.+-]/)
    .slice(0, 3)
    .map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}
