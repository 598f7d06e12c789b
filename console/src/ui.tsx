import { type ButtonHTMLAttributes, type ComponentChildren, cloneElement, isValidElement } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

/** Shared pieces: state badges, the run strip, loading and error states, forms, dialogs. */
export type CheckState = 'passing' | 'degraded' | 'failing' | 'paused' | 'maintenance' | 'nodata';
export const STATE_LABELS: Record<CheckState, string> = {
  passing: 'Passing',
  degraded: 'Degraded',
  failing: 'Failing',
  paused: 'Paused',
  maintenance: 'In maintenance',
  nodata: 'No data',
};

export function StateBadge({ state }: { state: CheckState }) {
  return (
    <span class={`badge state-${state}`}>
      <span class="dot" aria-hidden="true" />
      {STATE_LABELS[state]}
    </span>
  );
}

import type { Bucket } from './checks';

export type { Bucket } from './checks';

const CELL: Record<string, string> = { none: 'var(--none)', fail: 'var(--fail)', degraded: 'var(--degraded)', pass: 'var(--pass)' };
const cellOf = (b: Bucket) => (b.runs === 0 ? 'none' : b.failed > 0 ? 'fail' : b.degraded > 0 ? 'degraded' : 'pass');

/**
 * One cell per bucket: failing, degraded, passing, or empty (no runs: no data, never passing). Drawn as one
 * element whose background has a stop per run of equal cells (the stylesheet lays the gaps over it): Home draws a
 * thousand strips of 48 cells, and 48,000 elements would cost the page most of a second. Its label says it in words.
 */
export function Strip({ buckets, label }: { buckets: Bucket[]; label: string }) {
  const failing = buckets.filter((b) => b.failed > 0).length;
  const empty = buckets.filter((b) => b.runs === 0).length;
  // Periods that expected runs and got fewer: no data, never up.
  const missing = buckets.filter((b) => b.expected !== null && b.runs < b.expected).length;
  const n = Math.max(1, buckets.length);
  const stops: string[] = [];
  for (let i = 0; i < buckets.length; ) {
    const kind = cellOf(buckets[i]!);
    let j = i + 1;
    while (j < buckets.length && cellOf(buckets[j]!) === kind) j++;
    stops.push(`${CELL[kind]} ${((100 * i) / n).toFixed(3)}% ${((100 * j) / n).toFixed(3)}%`);
    i = j;
  }
  const cells = stops.length ? `linear-gradient(to right, ${stops.join(', ')})` : 'none';
  return (
    <div
      class="strip"
      role="img"
      data-cells={buckets.map(cellOf).join(' ')}
      aria-label={`${label}: ${failing} of ${buckets.length} periods with failures, ${empty} without runs${missing ? `, ${missing} with missing runs (no data)` : ''}`}
      style={{ '--n': String(n), '--cells': cells }}
    />
  );
}

/**
 * An action a screen runs (a save, a delete): whether it is running, the error it ended with, and the error the API
 * gave a field (`name`, or a channel's `config.name`), to show at that field.
 */
export function useAction() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (k: string) => (error instanceof ApiError ? (error.fields[k] ?? error.fields[`config.${k}`]) : undefined);
  return { error, busy, run, fieldError };
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="muted" role="status">
      {what}…
    </p>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** Runs `load` when its inputs change (and every `refreshMs`); the last answer, its error, and a reload. */
export function useData<T>(load: (signal: AbortSignal) => Promise<T>, inputs: unknown[], refreshMs?: number) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(ctrl.signal).then(
      (data) => !ctrl.signal.aborted && setState({ data, loading: false }),
      (error) => !ctrl.signal.aborted && setState((s) => ({ ...s, error, loading: false })),
    );
    const timer = refreshMs ? setTimeout(() => setTick((n) => n + 1), refreshMs) : undefined;
    return () => {
      ctrl.abort();
      clearTimeout(timer);
    };
  }, [...inputs, tick]);
  return { ...state, reload: () => setTick((n) => n + 1) };
}

let fieldIds = 0;

/** A labelled control: the label names it, the hint and the error describe it (the control is the only child). */
export function Field({ label, error, hint, children }: { label: string; error?: string; hint?: string; children: ComponentChildren }) {
  const [id] = useState(() => `field-${++fieldIds}`);
  const child = isValidElement(children) ? children : null;
  const described = [hint && !error ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field ${error ? 'invalid' : ''}`}>
      <label class="label" for={id}>
        {label}
      </label>
      {child ? cloneElement(child, { id, 'aria-describedby': described, 'aria-invalid': error ? true : undefined }) : children}
      {hint && !error && (
        <span class="hint" id={`${id}-hint`}>
          {hint}
        </span>
      )}
      {error && (
        <span class="field-error" id={`${id}-error`} role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

export function Button({ kind = 'secondary', ...rest }: { kind?: 'primary' | 'secondary' | 'danger' } & ButtonHTMLAttributes<HTMLButtonElement>) {
  return <button type="button" {...rest} class={`btn btn-${kind} ${rest.class ?? ''}`} />;
}

/** A modal dialog (the platform's <dialog>): focus moves in, Escape closes it. */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="dialog-title">
      <h2 id="dialog-title">{title}</h2>
      {open && children}
    </dialog>
  );
}

/** Asks before something that cannot be undone. */
export function confirmAction(message: string): boolean {
  return window.confirm(message);
}

export function CopyBox({ value, label }: { value: string; label: string }) {
  return (
    <div class="copybox">
      <code title={label}>{value}</code>
      <Button onClick={() => void navigator.clipboard?.writeText(value)}>Copy</Button>
    </div>
  );
}
