import { useState } from 'preact/hooks';
import { Field } from '../ui';
import { joinPath } from './draft';
import { Checks, Choice, ListInput, NumberInput, optionsOf, Pairs, Rows, TextInput, Toggle, useFormState } from './form';
import { type ApiDocument, isIgnored, resolve, type Schema } from './schema';
import { fieldLabel } from './words';

/**
 * The fields of a schema a form does not lay out itself, each with a control its schema implies: a list of values a
 * select, a boolean a checkbox, name/value rows as rows, an object its own fields. What fits none (a free-form
 * object) is JSON text, checked before it is sent. A field the service adds appears here without a console change.
 */
export function SchemaFields({
  doc,
  schema,
  base = '',
  skip = [],
  labels = {},
  hints = {},
}: {
  doc: ApiDocument;
  schema: Schema | undefined;
  base?: string;
  skip?: string[];
  labels?: Record<string, string>;
  hints?: Record<string, string>;
}) {
  const s = resolve(doc, schema);
  const entries = Object.entries(s?.properties ?? {}).filter(([k, p]) => !skip.includes(k) && !isIgnored(resolve(doc, p)) && !isIgnored(p));
  return (
    <>
      {entries.map(([k, p]) => (
        <SchemaField doc={doc} schema={p} path={joinPath(base, k)} label={labels[k] ?? fieldLabel(k)} hint={hints[k]} />
      ))}
    </>
  );
}

export function SchemaField({ doc, schema, path, label, hint }: { doc: ApiDocument; schema: Schema; path: string; label: string; hint?: string }) {
  const s = resolve(doc, schema) ?? {};
  const types = ([] as string[]).concat(s.type ?? []).filter((t) => t !== 'null');
  const nullable = ([] as string[]).concat(s.type ?? []).includes('null') || Boolean(schema.anyOf);
  const note = hint ?? (s.description && s.description.length < 160 ? s.description : undefined);
  const values = (s.enum ?? []).filter((v) => v !== null && v !== '').map(String);
  if (values.length)
    return (
      <Choice
        path={path}
        label={label}
        hint={note}
        options={optionsOf(values)}
        numeric={types.includes('number') || types.includes('integer')}
        none={nullable ? 'Not set' : undefined}
      />
    );
  if (types.length === 1 && types[0] === 'boolean') return <Toggle path={path} label={label} hint={note} />;
  if (types.length === 1 && (types[0] === 'integer' || types[0] === 'number'))
    return (
      <NumberInput
        path={path}
        label={label}
        hint={note}
        min={s.minimum}
        max={s.maximum}
        step={types[0] === 'integer' ? 1 : undefined}
        empty={nullable ? 'null' : 'remove'}
      />
    );
  if (types.length === 1 && types[0] === 'string')
    return (
      <TextInput
        path={path}
        label={label}
        hint={note}
        multiline={(s.maxLength ?? 0) > 4096 ? 8 : undefined}
        type={s.format === 'email' ? 'email' : 'text'}
        empty={nullable ? 'null' : 'remove'}
      />
    );
  if (types.length === 1 && types[0] === 'array') {
    const item = resolve(doc, s.items) ?? {};
    const itemValues = (item.enum ?? []).filter((v) => v !== null).map(String);
    if (itemValues.length) return <Checks path={path} label={label} hint={note} options={optionsOf(itemValues)} />;
    if (([] as string[]).concat(item.type ?? []).includes('string')) return <ListInput path={path} label={label} hint={note} />;
    const keys = Object.keys(item.properties ?? {});
    if (keys.length === 2 && keys.includes('key') && keys.includes('value')) return <Pairs path={path} label={label} hint={note} />;
    // Rows of simple fields (a header with its flags, a metadata pair): each row its fields.
    const simple = keys.length > 0 && keys.length <= 6 && keys.every((k) => isSimple(resolve(doc, item.properties![k])));
    if (simple)
      return (
        <Rows
          path={path}
          label={label}
          hint={note}
          add={`Add ${label.toLowerCase().replace(/s$/, '')}`}
          blank={() => Object.fromEntries(keys.map((k) => [k, blankOf(resolve(doc, item.properties![k]))]).filter(([, v]) => v !== undefined))}
          row={(p) => <SchemaFields doc={doc} schema={item} base={p} />}
        />
      );
  }
  if (types.length === 1 && types[0] === 'object' && s.properties && Object.keys(s.properties).length && s.additionalProperties === false)
    return (
      <fieldset class="group">
        <legend class="label">{label}</legend>
        <SchemaFields doc={doc} schema={s} base={path} />
      </fieldset>
    );
  return <JsonInput path={path} label={label} hint={note} />;
}

const typesOf = (s: Schema | undefined) => ([] as string[]).concat(s?.type ?? []).filter((t) => t !== 'null');
const isSimple = (s: Schema | undefined) => Boolean(s?.enum) || ['string', 'number', 'integer', 'boolean'].includes(typesOf(s)[0] ?? '');
/** A new row's value of a field: its default, else empty text, false or nothing. */
function blankOf(s: Schema | undefined): unknown {
  if (s?.default !== undefined) return s.default;
  if (s?.enum) return s.enum.find((v) => v !== null);
  const t = typesOf(s)[0];
  return t === 'string' ? '' : t === 'boolean' ? false : undefined;
}

/** A value with no simpler control, as JSON text: the draft keeps the parsed value, or the text while it does not parse. */
export function JsonInput({ path, label, hint }: { path: string; label: string; hint?: string }) {
  const form = useFormState();
  const v = form.value(path);
  const [text, setText] = useState<string | null>(null);
  return (
    <Field label={label} hint={hint ?? 'JSON'} error={form.error(path)}>
      <textarea
        name={path}
        rows={4}
        value={text ?? (v === undefined ? '' : JSON.stringify(v, null, 2))}
        onInput={(e) => {
          const t = (e.target as HTMLTextAreaElement).value;
          setText(t);
          if (t.trim() === '') {
            form.setLocal(path, undefined);
            form.set(path, undefined);
            return;
          }
          try {
            form.set(path, JSON.parse(t));
            form.setLocal(path, undefined);
          } catch {
            form.setLocal(path, 'is not valid JSON');
          }
        }}
      />
    </Field>
  );
}
