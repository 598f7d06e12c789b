import { allPages, get } from '../api';
import { Checks, Choice, Fold, ListInput, NumberInput, optionsOf, Rows, Section, TextInput, Toggle, useFormState } from '../forms/form';
import { type ApiDocument, choicesAt, type Schema } from '../forms/schema';
import { Field, useData } from '../ui';

/** What the shared part of the form offers to pick from: locations with their runners, channels, groups. */
export interface Choices {
  locations: { region: string; name: string; runners?: number }[];
  privateLocations: { slugName: string; name: string }[];
  channels: { id: number; type: string; name: string }[];
  groups: { id: number; name: string }[];
}

export const channelName = (c: { id: number; type: string; config?: Record<string, unknown>; name?: string }) =>
  c.name ??
  String(c.config?.name ?? c.config?.serviceName ?? c.config?.address ?? c.config?.url ?? c.config?.number ?? `${c.type.toLowerCase()} channel ${c.id}`);

export function useChoices() {
  return useData(async (signal): Promise<Choices> => {
    const [locations, privateLocations, channels, groups] = await Promise.all([
      get<Choices['locations']>('/v1/locations', signal),
      allPages<Choices['privateLocations'][number]>('/v1/private-locations', signal),
      allPages<{ id: number; type: string; config: Record<string, unknown> }>('/v1/alert-channels', signal),
      allPages<Choices['groups'][number]>('/v1/check-groups', signal),
    ]);
    return { locations, privateLocations, channels: channels.map((c) => ({ id: c.id, type: c.type, name: channelName(c) })), groups };
  }, []);
}

/** Locations served by a runner first: a location without one never runs the check. */
export const servedFirst = (locations: Choices['locations']) =>
  [...locations].sort((a, b) => Number((b.runners ?? 0) > 0) - Number((a.runners ?? 0) > 0) || a.name.localeCompare(b.name));

const every = (minutes: number) =>
  minutes % 1440 === 0
    ? `${minutes / 1440 === 1 ? '24 hours' : `${minutes / 1440} days`}`
    : minutes % 60 === 0
      ? `${minutes / 60} hour${minutes === 60 ? '' : 's'}`
      : `${minutes} minute${minutes === 1 ? '' : 's'}`;

/** How often: the type's frequencies (minutes), and 10, 20 or 30 seconds where the type takes 0 and an offset. */
export function Frequency({
  doc,
  schema,
  none,
}: {
  doc: ApiDocument;
  schema: Schema | undefined /** The label of no frequency (a group leaving it to its checks). */;
  none?: string;
}) {
  const form = useFormState();
  const minutes = choicesAt(doc, schema, 'frequency').map(Number);
  const offsets = minutes.includes(0) ? choicesAt(doc, schema, 'frequencyOffset').map(Number) : [];
  const seconds = minutes.includes(0) ? (offsets.length ? offsets : [10, 20, 30]) : [];
  const f = form.value('frequency');
  const current = f === 0 ? `s${form.value('frequencyOffset') ?? 10}` : f === undefined || f === null ? '' : `m${f}`;
  return (
    <Field label="Run every" error={form.error('frequency') ?? form.error('frequencyOffset')}>
      <select
        name="frequency"
        value={current}
        onChange={(e) => {
          const v = (e.target as HTMLSelectElement).value;
          if (v === '') {
            form.set('frequency', null);
            form.set('frequencyOffset', undefined);
          } else if (v.startsWith('s')) {
            form.set('frequency', 0);
            form.set('frequencyOffset', Number(v.slice(1)));
          } else {
            form.set('frequency', Number(v.slice(1)));
            form.set('frequencyOffset', undefined);
          }
        }}
      >
        {none !== undefined && <option value="">{none}</option>}
        {seconds.map((s) => (
          <option value={`s${s}`}>{s} seconds</option>
        ))}
        {minutes
          .filter((m) => m > 0)
          .map((m) => (
            <option value={`m${m}`}>{every(m)}</option>
          ))}
      </select>
    </Field>
  );
}

/** The channels a check alerts: its subscriptions, one checkbox per channel of the account. */
export function Channels({ channels }: { channels: Choices['channels'] }) {
  const form = useFormState();
  const subs = (form.value('alertChannelSubscriptions') as { alertChannelId: number; activated: boolean }[] | undefined) ?? [];
  const on = new Set(subs.filter((s) => s.activated !== false).map((s) => s.alertChannelId));
  return (
    <fieldset class="field choices">
      <legend class="label">Alert these channels</legend>
      {channels.length === 0 && <span class="hint">The account has no alert channels yet (Alerts, Add channel).</span>}
      <div class="choice-grid">
        {channels.map((c) => (
          <label class="check-inline">
            <input
              type="checkbox"
              name="alertChannelSubscriptions"
              checked={on.has(c.id)}
              onChange={(e) => {
                const others = subs.filter((s) => s.alertChannelId !== c.id);
                form.set('alertChannelSubscriptions', (e.target as HTMLInputElement).checked ? [...others, { alertChannelId: c.id, activated: true }] : others);
              }}
            />
            {c.name}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** The fields every check has, laid out here; the type's own come before them. */
export const COMMON_FIELDS = [
  'name',
  'activated',
  'muted',
  'frequency',
  'frequencyOffset',
  'locations',
  'privateLocations',
  'retryStrategy',
  'degradedResponseTime',
  'maxResponseTime',
  'alertChannelSubscriptions',
  'tags',
  'groupId',
  'description',
  'runParallel',
  'shouldFail',
  'environmentVariables',
  'runtimeId',
];

export function CommonFields({
  doc,
  schema,
  choices,
  timings,
  runs,
}: {
  doc: ApiDocument;
  schema: Schema | undefined;
  choices: Choices;
  /** Whether the type's runs have a response time to judge. */
  timings: boolean;
  /** Whether the service runs it (a heartbeat is pinged instead: no locations, no retries). */
  runs: boolean;
}) {
  const runtimes = choicesAt(doc, schema, 'runtimeId');
  return (
    <>
      {runs && (
        <Section title="Where and how often" id="schedule-title">
          <Frequency doc={doc} schema={schema} />
          <Locations choices={choices} />
          <Retries doc={doc} schema={schema} />
          {timings && (
            <div class="inline-fields">
              <NumberInput path="degradedResponseTime" label="Degraded after (ms)" hint="A slower run passes as degraded" min={0} step={1} />
              <NumberInput path="maxResponseTime" label="Failing after (ms)" hint="A slower run fails" min={0} step={1} />
            </div>
          )}
        </Section>
      )}
      <Section title="Alerts and organisation" id="organise-title">
        <Channels channels={choices.channels} />
        <ListInput path="tags" label="Tags" />
        <Choice path="groupId" label="Group" numeric none="No group" options={choices.groups.map((g) => ({ value: String(g.id), label: g.name }))} />
        <div class="inline-fields">
          <Toggle path="activated" label="Activated" hint="Runs on its schedule" />
          <Toggle path="muted" label="Muted" hint="Runs without alerting" />
        </div>
      </Section>
      <Fold title="Advanced" paths={['description', 'runParallel', 'shouldFail', 'environmentVariables', 'runtimeId']}>
        <TextInput path="description" label="Description" multiline={3} empty="null" />
        {runs && <Toggle path="runParallel" label="Run in every location at once" hint="Otherwise one location a run, in turn" />}
        {runs && <Toggle path="shouldFail" label="Pass when it fails" hint="For checks that must be refused (inverted)" />}
        {runtimes.length > 0 && <Choice path="runtimeId" label="Runtime" options={optionsOf(runtimes, (v) => v)} none="The account's default" />}
        {runs && <Variables />}
      </Fold>
    </>
  );
}

/**
 * Public locations: the ones a runner of this service serves, then the rest folded away (a check there waits until a
 * runner starts), and the account's private ones.
 */
export function Locations({ choices }: { choices: Choices }) {
  const form = useFormState();
  const picked = new Set((form.value('locations') as string[] | null | undefined) ?? []);
  const option = (l: Choices['locations'][number]) => ({ value: l.region, label: `${l.name} (${l.region})` });
  const served = choices.locations.filter((l) => l.runners === undefined || l.runners > 0 || picked.has(l.region));
  const others = choices.locations.filter((l) => !served.includes(l));
  return (
    <>
      <Checks path="locations" label="Locations" hint={others.length ? 'Where a runner of this service runs it' : undefined} options={served.map(option)} />
      {others.length > 0 && (
        <details class="more-locations">
          <summary>Other locations ({others.length}, no runner there now)</summary>
          <Checks path="locations" label="Locations without a runner" hint="A check there waits until a runner serves it" options={others.map(option)} />
        </details>
      )}
      {choices.privateLocations.length > 0 && (
        <Checks
          path="privateLocations"
          label="Private locations"
          options={choices.privateLocations.map((p) => ({ value: p.slugName, label: `${p.name} (${p.slugName})` }))}
        />
      )}
    </>
  );
}

/** The retry strategy: which, and its limits when there are retries. */
export function Retries({ doc, schema }: { doc: ApiDocument; schema: Schema | undefined }) {
  const form = useFormState();
  const retry = (form.value('retryStrategy') as { type?: string } | null | undefined)?.type;
  return (
    <>
      <Field
        label="Retries"
        hint="A failed run is run again before it counts as failing."
        error={form.error('retryStrategy') ?? form.error('retryStrategy.type')}
      >
        <select
          name="retryStrategy"
          value={retry ?? ''}
          onChange={(e) => {
            const v = (e.target as HTMLSelectElement).value;
            const current = (form.value('retryStrategy') as Record<string, unknown> | null | undefined) ?? {};
            form.set('retryStrategy', v === '' ? null : { ...current, type: v });
          }}
        >
          <option value="">The service's default</option>
          {optionsOf(choicesAt(doc, schema, 'retryStrategy.type')).map((o) => (
            <option value={o.value}>{o.label}</option>
          ))}
        </select>
      </Field>
      {retry && retry !== 'NO_RETRIES' && (
        <div class="inline-fields">
          {retry !== 'SINGLE_RETRY' && <NumberInput path="retryStrategy.maxRetries" label="Most retries" min={0} max={10} step={1} />}
          <NumberInput path="retryStrategy.baseBackoffSeconds" label="Wait before a retry (s)" min={0} />
          <NumberInput path="retryStrategy.maxDurationSeconds" label="Give up retrying after (s)" min={0} />
          <Toggle path="retryStrategy.sameRegion" label="Retry in the same location" />
          <Field label="Retry only on network errors">
            <input
              type="checkbox"
              checked={((form.value('retryStrategy.onlyOn') as string[] | undefined) ?? []).includes('NETWORK_ERROR')}
              onChange={(e) => form.set('retryStrategy.onlyOn', (e.target as HTMLInputElement).checked ? ['NETWORK_ERROR'] : undefined)}
            />
          </Field>
        </div>
      )}
    </>
  );
}

/** Variables: name, value, and whether it is secret (write-only: a stored secret is kept while its value is left empty). */
export function Variables() {
  const form = useFormState();
  return (
    <Rows
      path="environmentVariables"
      label="Variables"
      hint="Read as {{NAME}} in requests and process.env.NAME in scripts. A secret one is never shown again."
      add="Add variable"
      blank={() => ({ key: '', value: '', secret: false })}
      row={(p) => (
        <>
          <TextInput path={`${p}.key`} label="Name" empty="string" />
          <TextInput
            path={`${p}.value`}
            label="Value"
            type={form.value(`${p}.secret`) ? 'password' : 'text'}
            placeholder={form.value(`${p}.secret`) ? 'Unchanged unless you type a new one' : undefined}
            empty="string"
          />
          <Toggle path={`${p}.secret`} label="Secret" />
        </>
      )}
    />
  );
}
