import { fetch } from 'undici';
import type { Config } from '../platform/config.js';
import type { OutboundPolicy } from '../platform/outbound.js';
import type { Evidence, RunView } from './evidence.js';
import type { Analysis } from './explain.js';

/**
 * An optional model that makes an analysis read better (docs/rca.md): an OpenAI-compatible chat endpoint the team
 * runs or chooses (RCA_MODEL_URL), sent the rules' analysis and its evidence with secrets masked, through the
 * outbound policy. It rewrites the prose only (root cause, user impact, fix): the class, the evidence and the links
 * stay the rules'. When it fails or answers something unusable, the rules' analysis stands as it was.
 */

const SENSITIVE_HEADERS = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-auth-token|api-key)$/i;

/** Keys whose values look like credentials, in a JSON body. */
const SENSITIVE_KEYS = /(token|secret|passw|session|api[-_]?key|auth|cookie|credential|private[-_]?key|signature)/i;

function maskJson(value: unknown, depth = 0): unknown {
  if (depth > 20) return '…';
  if (Array.isArray(value)) return value.map((v) => maskJson(v, depth + 1));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SENSITIVE_KEYS.test(k) ? '********' : maskJson(v, depth + 1)]));
  return value;
}

/** A body as the model may read it: JSON with credential-like keys masked; other text only its first 2,000 characters, tokens masked. */
function maskBody(body: string | null | undefined): string | null | undefined {
  if (!body) return body;
  try {
    return JSON.stringify(maskJson(JSON.parse(body)));
  } catch {
    return body.slice(0, 2000).replace(/\b(eyJ[\w-]+\.[\w-]+\.[\w-]+|[A-Za-z0-9_-]{32,})\b/g, '********');
  }
}

/** A URL without its query string or credentials (they may carry tokens). */
function maskUrl(url: string | null | undefined): string | null | undefined {
  if (!url) return url;
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return url.split('?')[0];
  }
}

function masked(run: RunView | null): RunView | null {
  if (!run) return run;
  return {
    ...run,
    url: maskUrl(run.url) ?? undefined,
    body: maskBody(run.body),
    ...(run.headers ? { headers: Object.fromEntries(Object.entries(run.headers).map(([k, v]) => [k, SENSITIVE_HEADERS.test(k) ? '********' : v])) } : {}),
  };
}

const SYSTEM = [
  'You explain why a synthetic monitoring check failed, for the engineers who own the service it checks.',
  'Use only the evidence given: never invent causes, numbers or names. When the evidence does not show a cause, say so.',
  'Answer with one JSON object and nothing else: {"rootCause": string, "userImpact": string, "codeFix": string or null}.',
  'rootCause: two to four sentences, the cause first. userImpact: one or two sentences. codeFix: what to change, or null.',
].join(' ');

export interface ModelOutcome {
  analysis: Analysis;
  /** The model that wrote it; undefined when the rules' analysis stands. */
  model?: string;
  /** Why the model's answer was not used. */
  problem?: string;
}

export async function improveWithModel(
  settings: NonNullable<Config['rcaModel']>,
  policy: OutboundPolicy,
  analysis: Analysis,
  evidence: Evidence,
): Promise<ModelOutcome> {
  const input = {
    analysis,
    evidence: {
      ...evidence,
      check: { ...evidence.check, url: maskUrl(evidence.check.url) ?? null },
      failing: masked(evidence.failing),
      passing: masked(evidence.passing),
      // Who made a change is not sent: the model needs only that it changed.
      changes: evidence.changes.map((c) => ({ ...c, actor: null })),
    },
  };
  const url = `${settings.url}/chat/completions`;
  const refused = policy.urlRefusal(url);
  if (refused) return { analysis, problem: `the outbound policy refuses ${settings.url}: ${refused}` };
  try {
    const res = await fetch(url, {
      method: 'POST',
      dispatcher: policy.dispatcher(),
      signal: AbortSignal.timeout(settings.timeoutMs),
      headers: { 'content-type': 'application/json', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
      body: JSON.stringify({
        model: settings.model,
        temperature: 0,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: JSON.stringify(input) },
        ],
      }),
    });
    const text = await res.text();
    if (!res.ok) return { analysis, problem: `the model answered ${res.status}` };
    const content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    if (typeof content !== 'string') return { analysis, problem: 'the model answered no message' };
    const json = /\{[\s\S]*\}/.exec(content)?.[0];
    const said = json ? (JSON.parse(json) as { rootCause?: unknown; userImpact?: unknown; codeFix?: unknown }) : undefined;
    if (!said || typeof said.rootCause !== 'string' || !said.rootCause.trim() || typeof said.userImpact !== 'string')
      return { analysis, problem: 'the model answered no usable analysis' };
    return {
      model: settings.model,
      analysis: {
        ...analysis,
        rootCause: said.rootCause.trim().slice(0, 4000),
        userImpact: said.userImpact.trim().slice(0, 2000),
        codeFix: typeof said.codeFix === 'string' && said.codeFix.trim() ? said.codeFix.trim().slice(0, 4000) : analysis.codeFix,
      },
    };
  } catch (err) {
    return { analysis, problem: `the model could not be asked: ${(err as Error).message}` };
  }
}
