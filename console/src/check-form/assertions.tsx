import { Choice, optionsOf, Rows, TextInput, useFormState } from '../forms/form';
import { type ApiDocument, choicesAt, type Schema } from '../forms/schema';

/** Sources that compare one value and take no property (the status code, the response time…). */
const WITHOUT_PROPERTY = new Set([
  'STATUS_CODE',
  'RESPONSE_TIME',
  'TEXT_BODY',
  'LATENCY',
  'RESPONSE_CODE',
  'TEXT_ANSWER',
  'HOP_COUNT',
  'PACKET_LOSS',
  'GRPC_HEALTHCHECK_STATUS',
  'GRPC_STATUS_CODE',
  'CONNECTION',
  'TEXT_RESPONSE',
]);
/** What the property of a source is, in words. */
const PROPERTY_HINTS: Record<string, { label: string; hint: string }> = {
  JSON_BODY: { label: 'JSON path', hint: 'For example $.items.length or $.status' },
  JSON_RESPONSE: { label: 'JSON path', hint: 'For example $.issuer' },
  JSON_ANSWER: { label: 'JSON path', hint: 'For example $.Answer[0].data' },
  HEADERS: { label: 'Header name', hint: 'For example content-type' },
  GRPC_METADATA: { label: 'Metadata key', hint: '' },
  GRPC_RESPONSE: { label: 'JSON path', hint: 'Into the response message, for example $.status' },
  CERTIFICATE: { label: 'Certificate field', hint: 'For example daysRemaining or issuer' },
};
/** Comparisons that take no target. */
const WITHOUT_TARGET = new Set(['IS_EMPTY', 'NOT_EMPTY', 'IS_NULL', 'NOT_NULL']);

/**
 * The assertion rows of a check: what to look at (source and, for JSON or a header, which part), how to compare, and
 * with what. The sources and comparisons are the ones the type's schema takes.
 */
export function Assertions({ doc, schema, path, hideLegend }: { doc: ApiDocument; schema: Schema | undefined; path: string; hideLegend?: boolean }) {
  const form = useFormState();
  const sources = choicesAt(doc, schema, `${path}[0].source`);
  const comparisons = choicesAt(doc, schema, `${path}[0].comparison`);
  if (!sources.length) return null;
  return (
    <Rows
      path={path}
      label="Assertions"
      hideLegend={hideLegend}
      hint="Each one must hold for the run to pass."
      add="Add assertion"
      empty="No assertions: a run passes when it gets an answer."
      blank={() => ({ source: sources[0], comparison: 'EQUALS', property: '', target: '' })}
      row={(p) => {
        const source = String(form.value(`${p}.source`) ?? '');
        const comparison = String(form.value(`${p}.comparison`) ?? '');
        const prop = PROPERTY_HINTS[source];
        return (
          <>
            <Choice path={`${p}.source`} label="Source" options={optionsOf(sources)} />
            {!WITHOUT_PROPERTY.has(source) && (
              <TextInput path={`${p}.property`} label={prop?.label ?? 'Property'} hint={prop?.hint || undefined} empty="string" />
            )}
            <Choice path={`${p}.comparison`} label="Comparison" options={optionsOf(comparisons)} />
            {!WITHOUT_TARGET.has(comparison) && <TextInput path={`${p}.target`} label="Target" empty="string" />}
          </>
        );
      }}
    />
  );
}
