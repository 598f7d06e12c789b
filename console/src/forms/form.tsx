import { type ComponentChildren, createContext } from 'preact';
import { useContext, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { Button, ErrorNote, Field } from '../ui';
import { copy, errorsUnder, getAt, type Json, joinPath, setAt } from './draft';
import { fieldLabel, valueLabel } from './words';

/**
 * A form over a draft body: controls read and write it by path, and show the API's refusal of their own path. What
 * the API refused at a path no control shows is listed above the buttons, so no refusal goes unseen.
 */
export interface FormState {
  draft: Json;
  value: (path: string) => unknown;
  set: (path: string, value: unknown) => void;
  error: (path: string) => string | undefined;
  errors: Record<string, string>;
  /** Shows a refusal: the API's field errors at their paths, anything else as the form's error. */
  fail: (err: unknown) => void;
  failure: unknown;
  busy: boolean;
  /** Runs a submit: clears the last refusal, sets busy, shows what it throws. */
  submit: (fn: (draft: Json) => Promise<unknown>) => Promise<void>;
  replace: (draft: Json) => void;
  /** Paths a control showed, so the summary lists only the rest. */
  shown: Set<string>;
  /** A control's own refusal (text that is not JSON): shown at it, and the form is not sent while one stands. */
  setLocal: (path: string, message: string | undefined) => void;
}

export function useDraftForm(initial: Json | (() => Json)): FormState {
  const [draft, setDraft] = useState<Json>(() => copy(typeof initial === 'function' ? initial() : initial));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [local, setLocalErrors] = useState<Record<string, string>>({});
  const latest = useRef(draft);
  latest.current = draft;
  const shown = useMemo(() => new Set<string>(), []);
  const fail = (err: unknown) => {
    if (err instanceof ApiError && Object.keys(err.fields).length) {
      setErrors(err.fields);
      setFailure(new ApiError(err.status, 'Some fields need a change: see the messages at them.'));
    } else {
      setErrors({});
      setFailure(err);
    }
  };
  return {
    draft,
    value: (path) => getAt(draft, path),
    set: (path, value) => {
      latest.current = setAt(latest.current, path, value);
      setDraft(latest.current);
    },
    error: (path) => {
      shown.add(path);
      return local[path] ?? errors[path];
    },
    errors,
    fail,
    failure,
    busy,
    submit: async (fn) => {
      if (Object.keys(local).length) {
        setFailure(new Error('Some fields need a change: see the messages at them.'));
        return;
      }
      setBusy(true);
      setFailure(null);
      setErrors({});
      try {
        await fn(latest.current);
      } catch (err) {
        fail(err);
      } finally {
        setBusy(false);
      }
    },
    replace: (d) => {
      latest.current = copy(d);
      setDraft(latest.current);
    },
    shown,
    setLocal: (path, message) =>
      setLocalErrors((l) => {
        if (l[path] === message) return l;
        const next = { ...l };
        if (message === undefined) delete next[path];
        else next[path] = message;
        return next;
      }),
  };
}

const FormContext = createContext<FormState | null>(null);

export function useFormState(): FormState {
  const f = useContext(FormContext);
  if (!f) throw new Error('a form control outside a form');
  return f;
}

/** The form element: its controls, the refusals no control showed, and its buttons. */
export function DraftForm({
  form,
  onSubmit,
  children,
  label,
  class: className,
}: {
  form: FormState;
  onSubmit: (draft: Json) => Promise<unknown>;
  children: ComponentChildren;
  label?: string;
  class?: string;
}) {
  return (
    <FormContext.Provider value={form}>
      <form
        class={className ?? 'draft-form'}
        aria-label={label}
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void form.submit(onSubmit);
        }}
      >
        {children}
      </form>
    </FormContext.Provider>
  );
}

/** The form's refusal, and each field error no control on the form showed. */
export function FormErrors() {
  const form = useFormState();
  const rest = Object.entries(form.errors).filter(([k]) => !form.shown.has(k));
  return (
    <>
      <ErrorNote error={form.failure} />
      {rest.length > 0 && (
        <ul class="error-list" role="alert">
          {rest.map(([k, m]) => (
            <li>
              {k
                .split(/[.[\]]+/)
                .filter(Boolean)
                .map(fieldLabel)
                .join(' › ')}
              : {m}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

const inputValue = (e: Event) => (e.target as HTMLInputElement).value;

export interface ControlProps {
  path: string;
  label: string;
  hint?: string;
}

export function TextInput({
  path,
  label,
  hint,
  type = 'text',
  placeholder,
  required,
  multiline,
  autocomplete,
  empty,
}: ControlProps & {
  type?: 'text' | 'url' | 'email' | 'password' | 'tel';
  placeholder?: string;
  required?: boolean;
  multiline?: boolean | number;
  autocomplete?: string;
  /** What an emptied field sends: nothing (the key removed), null, or an empty string. */
  empty?: 'remove' | 'null' | 'string';
}) {
  const form = useFormState();
  const v = form.value(path);
  // A required field emptied is sent empty (the API says it is required, at the field); others are left out.
  const emptied = empty ?? (required ? 'string' : 'remove');
  const set = (s: string) => form.set(path, s === '' ? (emptied === 'null' ? null : emptied === 'string' ? '' : undefined) : s);
  return (
    <Field label={label} hint={hint} error={form.error(path)}>
      {multiline ? (
        <textarea
          name={path}
          rows={typeof multiline === 'number' ? multiline : 5}
          value={v === undefined || v === null ? '' : String(v)}
          placeholder={placeholder}
          onInput={(e) => set(inputValue(e))}
        />
      ) : (
        <input
          name={path}
          // One of the text-like types (preact types each input type apart).
          type={type as 'text'}
          required={required}
          autocomplete={autocomplete ?? (type === 'password' ? 'new-password' : 'off')}
          value={v === undefined || v === null ? '' : String(v)}
          placeholder={placeholder}
          onInput={(e) => set(inputValue(e))}
        />
      )}
    </Field>
  );
}

export function NumberInput({
  path,
  label,
  hint,
  min,
  max,
  step,
  empty = 'remove',
}: ControlProps & { min?: number; max?: number; step?: number; empty?: 'remove' | 'null' }) {
  const form = useFormState();
  const v = form.value(path);
  // A number being typed ("1e", "-") stays as typed; the draft holds the number it is, or the text when it is none.
  const [text, setText] = useState<string | null>(null);
  const shown = text ?? (v === undefined || v === null ? '' : String(v));
  return (
    <Field label={label} hint={hint} error={form.error(path)}>
      <input
        name={path}
        type="number"
        inputMode="decimal"
        min={min}
        max={max}
        step={step ?? 'any'}
        value={shown}
        onInput={(e) => {
          const s = inputValue(e);
          setText(s);
          form.set(path, s === '' ? (empty === 'null' ? null : undefined) : Number.isNaN(Number(s)) ? s : Number(s));
        }}
        onBlur={() => setText(null)}
      />
    </Field>
  );
}

export interface Option {
  value: string;
  label: string;
}
export const optionsOf = (values: readonly string[], label: (v: string) => string = valueLabel): Option[] => values.map((v) => ({ value: v, label: label(v) }));

/** One of a list: the draft holds the value (a number when `numeric`). */
export function Choice({
  path,
  label,
  hint,
  options,
  numeric,
  none,
}: ControlProps & { options: Option[]; numeric?: boolean /** The label of "no value" (null), when the field may have none. */; none?: string }) {
  const form = useFormState();
  const v = form.value(path);
  const current = v === undefined || v === null ? '' : String(v);
  return (
    <Field label={label} hint={hint} error={form.error(path)}>
      <select
        name={path}
        value={current}
        onChange={(e) => {
          const s = inputValue(e);
          form.set(path, s === '' ? (none !== undefined ? null : undefined) : numeric ? Number(s) : s);
        }}
      >
        {(none !== undefined || !options.some((o) => o.value === current)) && <option value="">{none ?? '—'}</option>}
        {options.map((o) => (
          <option value={o.value}>{o.label}</option>
        ))}
      </select>
    </Field>
  );
}

export function Toggle({ path, label, hint }: ControlProps) {
  const form = useFormState();
  const error = form.error(path);
  const id = `toggle-${path.replace(/[^\w-]/g, '-')}`;
  return (
    <div class={`field check-inline ${error ? 'invalid' : ''}`}>
      <input
        id={id}
        name={path}
        type="checkbox"
        checked={Boolean(form.value(path))}
        aria-describedby={hint || error ? `${id}-note` : undefined}
        onChange={(e) => form.set(path, (e.target as HTMLInputElement).checked)}
      />
      <label for={id}>{label}</label>
      {(hint || error) && (
        <span id={`${id}-note`} class={error ? 'field-error' : 'hint'} role={error ? 'alert' : undefined}>
          {error ?? hint}
        </span>
      )}
    </div>
  );
}

/** Several of a list (a field holding an array of values), as checkboxes under one legend. */
export function Checks({ path, label, hint, options }: ControlProps & { options: Option[] }) {
  const form = useFormState();
  const picked = ((form.value(path) as string[] | null | undefined) ?? []).map(String);
  const error = form.error(path) ?? Object.entries(form.errors).find(([k]) => k.startsWith(`${path}[`))?.[1];
  return (
    <fieldset class={`field choices ${error ? 'invalid' : ''}`}>
      <legend class="label">{label}</legend>
      {hint && <span class="hint">{hint}</span>}
      <div class="choice-grid">
        {options.map((o) => (
          <label class="check-inline">
            <input
              type="checkbox"
              name={path}
              value={o.value}
              checked={picked.includes(o.value)}
              onChange={(e) => form.set(path, (e.target as HTMLInputElement).checked ? [...picked, o.value] : picked.filter((p) => p !== o.value))}
            />
            {o.label}
          </label>
        ))}
        {options.length === 0 && <span class="muted">None to choose from.</span>}
      </div>
      {error && (
        <span class="field-error" role="alert">
          {error}
        </span>
      )}
    </fieldset>
  );
}

/** A list of words (tags): typed separated by commas, held as an array. */
export function ListInput({ path, label, hint, placeholder }: ControlProps & { placeholder?: string }) {
  const form = useFormState();
  const list = (form.value(path) as string[] | null | undefined) ?? [];
  const [text, setText] = useState<string | null>(null);
  const error = form.error(path) ?? Object.entries(form.errors).find(([k]) => k.startsWith(`${path}[`))?.[1];
  return (
    <Field label={label} hint={hint ?? 'Separated by commas'} error={error}>
      <input
        name={path}
        value={text ?? list.join(', ')}
        placeholder={placeholder}
        onInput={(e) => {
          const s = inputValue(e);
          setText(s);
          form.set(
            path,
            s
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean),
          );
        }}
        onBlur={() => setText(null)}
      />
    </Field>
  );
}

/**
 * Rows of a list field (headers, assertions, services): each row drawn by `row` at its path, a button to remove
 * it, and one to add a `blank` row.
 */
export function Rows({
  path,
  label,
  hint,
  blank,
  add = 'Add',
  row,
  empty,
  hideLegend,
}: ControlProps & {
  blank: () => unknown;
  add?: string;
  row: (rowPath: string, i: number) => ComponentChildren;
  empty?: string;
  /** The section around it says what the rows are: the legend is for screen readers only. */
  hideLegend?: boolean;
}) {
  const form = useFormState();
  const rows = (form.value(path) as unknown[] | null | undefined) ?? [];
  const error = form.error(path);
  return (
    <fieldset class={`rows ${error ? 'invalid' : ''}`}>
      <legend class={hideLegend ? 'skip' : 'label'}>{label}</legend>
      {hint && <p class="hint">{hint}</p>}
      {rows.length === 0 && empty && <p class="muted">{empty}</p>}
      {rows.map((_, i) => (
        // biome-ignore lint/a11y/useSemanticElements: a row inside the list's fieldset; a nested fieldset would draw a second frame and legend
        <div class="row" role="group" aria-label={`${label} ${i + 1}`}>
          {row(joinPath(path, i), i)}
          <Button
            class="row-remove"
            aria-label={`Remove ${label.toLowerCase()} ${i + 1}`}
            onClick={() =>
              form.set(
                path,
                rows.filter((__, j) => j !== i),
              )
            }
          >
            Remove
          </Button>
        </div>
      ))}
      {error && (
        <span class="field-error" role="alert">
          {error}
        </span>
      )}
      <Button onClick={() => form.set(path, [...rows, blank()])}>{add}</Button>
    </fieldset>
  );
}

/** Name and value rows (headers, query parameters, metadata). */
export function Pairs({
  path,
  label,
  hint,
  keyLabel = 'Name',
  valueLabel: vLabel = 'Value',
  add,
}: ControlProps & { keyLabel?: string; valueLabel?: string; add?: string }) {
  return (
    <Rows
      path={path}
      label={label}
      hint={hint}
      add={add ?? `Add ${label.toLowerCase().replace(/s$/, '')}`}
      blank={() => ({ key: '', value: '' })}
      row={(p) => (
        <>
          <TextInput path={`${p}.key`} label={keyLabel} empty="string" />
          <TextInput path={`${p}.value`} label={vLabel} empty="string" />
        </>
      )}
    />
  );
}

/** Settings most people leave as they are, folded away; open when one of them was refused. */
export function Fold({ title, paths = [], children, open }: { title: string; paths?: string[]; children: ComponentChildren; open?: boolean }) {
  const form = useFormState();
  const refused = paths.some((p) => errorsUnder(form.errors, p).length > 0);
  return (
    <details class="fold" open={open || refused}>
      <summary>{title}</summary>
      <div class="fold-body">{children}</div>
    </details>
  );
}

/** A titled part of a long form. */
export function Section({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) {
  return (
    <section class="form-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A moment, picked in the viewer's time zone and held as an ISO time (UTC). */
export function DateTimeInput({ path, label, hint, empty = 'remove' }: ControlProps & { empty?: 'remove' | 'null' }) {
  const form = useFormState();
  const v = form.value(path);
  const local = (iso: string) => {
    const t = Date.parse(iso);
    return Number.isNaN(t) ? '' : new Date(t - new Date(t).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  };
  return (
    <Field label={label} hint={hint} error={form.error(path)}>
      <input
        name={path}
        type="datetime-local"
        value={typeof v === 'string' ? local(v) : ''}
        onInput={(e) => {
          const s = inputValue(e);
          const t = Date.parse(s);
          form.set(path, s === '' || Number.isNaN(t) ? (empty === 'null' ? null : undefined) : new Date(t).toISOString());
        }}
      />
    </Field>
  );
}
