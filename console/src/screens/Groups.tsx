import { allPages } from '../api';
import { Assertions } from '../check-form/assertions';
import { Channels, Frequency, Locations, Retries, useChoices, Variables } from '../check-form/common';
import { Fold, ListInput, NumberInput, Pairs, Section, TextInput, Toggle } from '../forms/form';
import { resourceScreens } from '../forms/resource';
import type { ApiDocument, Schema } from '../forms/schema';
import { ErrorNote, Loading } from '../ui';

/** Check groups: settings their checks share (locations, schedule, retries, channels, variables, API defaults). */
interface Group {
  id: number;
  name: string;
  tags: string[];
  locations: string[];
  privateLocations?: string[] | null;
  activated: boolean;
  muted: boolean;
  frequency?: number | null;
}

function GroupFields({ doc, schema }: { doc: ApiDocument; schema: Schema | undefined }) {
  const choices = useChoices();
  if (choices.error) return <ErrorNote error={choices.error} />;
  if (!choices.data) return <Loading what="Loading the choices" />;
  return (
    <>
      <TextInput path="name" label="Name" required />
      <ListInput path="tags" label="Tags" />
      <div class="inline-fields">
        <Toggle path="activated" label="Activated" hint="Off: none of its checks runs" />
        <Toggle path="muted" label="Muted" hint="Its checks run without alerting" />
      </div>
      <Section title="Where and how often its checks run" id="group-schedule">
        <Locations choices={choices.data} />
        <Frequency doc={doc} schema={schema} none="Each check's own" />
        <NumberInput path="concurrency" label="Checks run at once" min={1} max={100} step={1} />
        <Retries doc={doc} schema={schema} />
      </Section>
      <Section title="Alerts" id="group-alerts">
        <Channels channels={choices.data.channels} />
      </Section>
      <Fold title="API check defaults" paths={['apiCheckDefaults']}>
        <TextInput path="apiCheckDefaults.url" label="Base URL" hint="A check's URL that is a path is prefixed with it" empty="null" />
        <Pairs path="apiCheckDefaults.headers" label="Headers" add="Add header" />
        <Pairs path="apiCheckDefaults.queryParameters" label="Query parameters" add="Add query parameter" />
        <Assertions doc={doc} schema={schema} path="apiCheckDefaults.assertions" />
      </Fold>
      <Fold title="Variables" paths={['environmentVariables']}>
        <Variables />
      </Fold>
    </>
  );
}

export const groupScreens = resourceScreens<Group>({
  noun: 'group',
  title: 'Check groups',
  href: '/groups',
  api: '/v1/check-groups',
  idOf: (g) => g.id,
  nameOf: (g) => g.name,
  load: (signal) => allPages<Group>('/v1/check-groups', signal),
  columns: [
    { label: 'Group', cell: (g) => g.name },
    { label: 'State', cell: (g) => (!g.activated ? 'Deactivated' : g.muted ? 'Muted' : 'Active') },
    { label: 'Locations', cell: (g) => [...(g.locations ?? []), ...(g.privateLocations ?? [])].join(', ') || 'Each check’s own', narrow: true },
    { label: 'Tags', cell: (g) => g.tags.join(', '), narrow: true },
  ],
  empty: 'No groups. A group shares its settings (locations, schedule, alerts, variables) with the checks in it.',
  form: {
    blank: () => ({ name: '', activated: true, muted: false, tags: [], locations: [], concurrency: 3 }),
    Fields: GroupFields,
    owns: [
      'name',
      'tags',
      'activated',
      'muted',
      'locations',
      'privateLocations',
      'frequency',
      'concurrency',
      'retryStrategy',
      'alertChannelSubscriptions',
      'apiCheckDefaults',
      'environmentVariables',
    ],
  },
});
