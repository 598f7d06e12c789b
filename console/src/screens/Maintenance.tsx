import { allPages } from '../api';
import { time } from '../format';
import { Choice, DateTimeInput, ListInput, NumberInput, optionsOf, Section, TextInput, Toggle, useFormState } from '../forms/form';
import { resourceScreens } from '../forms/resource';
import { type ApiDocument, choicesAt, type Schema } from '../forms/schema';

/** Maintenance windows: when checks (all, or those with a tag) are expected to fail, once or repeating. */
interface Window {
  id: number;
  name: string;
  tags: string[];
  startsAt: string;
  endsAt: string;
  repeatUnit: string | null;
  repeatInterval: number | null;
}

const UNITS: Record<string, string> = { DAY: 'days', WEEK: 'weeks', MONTH: 'months' };

function WindowFields({ doc, schema }: { doc: ApiDocument; schema: Schema | undefined }) {
  const form = useFormState();
  const repeats = Boolean(form.value('repeatUnit'));
  return (
    <>
      <TextInput path="name" label="Name" required />
      <ListInput path="tags" label="Checks with these tags" hint="Separated by commas; none: every check" />
      <div class="inline-fields">
        <DateTimeInput path="startsAt" label="Starts" />
        <DateTimeInput path="endsAt" label="Ends" />
      </div>
      <Section title="Repeats" id="repeat-title">
        <Choice
          path="repeatUnit"
          label="Repeats every"
          none="Does not repeat"
          options={optionsOf(choicesAt(doc, schema, 'repeatUnit'), (v) => UNITS[v] ?? v.toLowerCase())}
        />
        {repeats && (
          <div class="inline-fields">
            <NumberInput path="repeatInterval" label="Every how many" min={1} step={1} empty="null" />
            <DateTimeInput path="repeatEndsAt" label="Until" empty="null" />
          </div>
        )}
      </Section>
      <Toggle path="pauseAllChecks" label="Pause the checks instead of running them" />
    </>
  );
}

export const maintenanceScreens = resourceScreens<Window>({
  noun: 'maintenance window',
  title: 'Maintenance windows',
  href: '/maintenance',
  api: '/v1/maintenance-windows',
  idOf: (w) => w.id,
  nameOf: (w) => w.name,
  load: (signal) => allPages<Window>('/v1/maintenance-windows', signal),
  columns: [
    { label: 'Name', cell: (w) => w.name },
    { label: 'When', cell: (w) => `${time(w.startsAt)} – ${time(w.endsAt)}` },
    { label: 'Repeats', cell: (w) => (w.repeatUnit ? `every ${w.repeatInterval ?? 1} ${UNITS[w.repeatUnit] ?? w.repeatUnit.toLowerCase()}` : 'once') },
    { label: 'Checks', cell: (w) => (w.tags?.length ? `tagged ${w.tags.join(', ')}` : 'all'), narrow: true },
  ],
  empty: 'No maintenance planned.',
  form: {
    blank: () => {
      const start = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
      return {
        name: '',
        tags: [],
        startsAt: new Date(start).toISOString(),
        endsAt: new Date(start + 3_600_000).toISOString(),
        repeatUnit: null,
        repeatInterval: null,
      };
    },
    Fields: WindowFields,
    owns: ['name', 'tags', 'startsAt', 'endsAt', 'repeatUnit', 'repeatInterval', 'repeatEndsAt', 'pauseAllChecks'],
  },
});
