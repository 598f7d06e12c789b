/**
 * What an analysis rests on: the failing run and the last passing run of the same check in the same location, where
 * and since when it fails, what else failed or changed around it. Gathered by `gather.ts` from what the service
 * holds; read by `explain.ts`, which makes every statement from it and from nothing else.
 */

export interface AssertionView {
  source: string;
  property?: string | null;
  comparison: string;
  target?: string | null;
  actual: unknown;
  error?: string;
}

/** One run as the analysis compares it (any field may be missing: each type reports what it has). */
export interface RunView {
  id: string;
  startedAt: string;
  location: string;
  failed: boolean;
  /** The run's error line, as its error group is keyed. */
  error: string | null;
  url?: string;
  method?: string;
  status?: number | null;
  statusText?: string | null;
  headers?: Record<string, string>;
  /** The response body as stored (secret values already masked when the run was recorded). */
  body?: string | null;
  /** Timing phases in ms (dns, tcp, tls, firstByte, download, total…). */
  timings?: Record<string, number>;
  responseTime?: number | null;
  assertions?: AssertionView[];
  requestError?: string | null;
  /** SSL checks and HTTPS requests: the certificate the server showed. */
  certificate?: { issuerCN: string | null; subjectCN: string | null; validTo: string; daysUntilExpiry: number; fingerprintSha256?: string } | null;
  sslFailure?: string | null;
  /** DNS checks: the answer and the return code. */
  dns?: { answer: string | null; returnCode: string | null } | null;
  /** Browser and multi-step runs: their errors (the first is the failing one, with its line when known). */
  scriptErrors?: string[];
  consoleErrors?: string[];
  failedRequests?: string[];
}

export interface Evidence {
  check: { id: string | null; name: string; type: string; url: string | null; host: string | null };
  group: { id: string; message: string; firstSeen: string; lastSeen: string; occurrences: number; kind: 'check' | 'test-session' };
  /** The newest failing run with the group's error. */
  failing: RunView | null;
  /** The last run of the same check in the same location that passed, before the failing one. */
  passing: RunView | null;
  /** Runs per location since shortly before the group's first failure. */
  locations: { location: string; runs: number; failed: number; private: boolean; agentsOnline?: number }[];
  /** The failing location's runs in order since then: how the failures come (steady or flapping). */
  sequence: { at: string; failed: boolean }[];
  /** Other checks of the account against the same host, and their runs over the same time. */
  sameHost: { checkId: string; name: string; runs: number; failed: number }[];
  /** Other checks whose failures have the same error, over the same time. */
  sameError: { checkId: string; name: string; occurrences: number }[];
  /** Writes to this check, and deploys, in the day before the first failure (from the audit log). */
  changes: { at: string; operation: string; actor: string | null; status: number }[];
  /** Maintenance windows on during the failures. */
  maintenance: { id: number; name: string; startsAt: string; endsAt: string }[];
  /** Links the service can give to the runs (the console's run pages). */
  links: { url: string; title: string }[];
}
