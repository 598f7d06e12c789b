import { allPages } from '../api';
import { ListInput, TextInput, Toggle } from '../forms/form';
import { resourceScreens } from '../forms/resource';

/** Dashboards: public (or private) pages of checks' states, by tag, at /dashboards/<address>. */
interface Dashboard {
  dashboardId: string;
  header: string | null;
  customUrl: string | null;
  customDomain: string | null;
  isPrivate: boolean;
  tags?: string[];
}

function DashboardFields() {
  return (
    <>
      <TextInput path="header" label="Title" required />
      <TextInput path="customUrl" label="Address" hint="Letters, digits and dashes: the page is at /dashboards/<address>" empty="null" />
      <ListInput path="tags" label="Checks with these tags" hint="Separated by commas; none: every check" />
      <TextInput path="description" label="Description" multiline={3} empty="null" />
      <Toggle path="isPrivate" label="Private" hint="Only with its key (made when saved)" />
      <Toggle path="sortByStatus" label="Failing checks first" />
    </>
  );
}

export const dashboardScreens = resourceScreens<Dashboard>({
  noun: 'dashboard',
  title: 'Dashboards',
  href: '/dashboards',
  formHref: '/edit/dashboards',
  api: '/v1/dashboards',
  idOf: (d) => d.dashboardId,
  nameOf: (d) => d.header || d.customUrl || 'the dashboard',
  load: (signal) => allPages<Dashboard>('/v1/dashboards', signal),
  columns: [
    { label: 'Dashboard', cell: (d) => (d.customUrl ? <a href={`/dashboards/${d.customUrl}`}>{d.header || d.customUrl}</a> : d.header || '(untitled)') },
    { label: 'Checks', cell: (d) => (d.tags?.length ? `tagged ${d.tags.join(', ')}` : 'every check') },
    { label: 'Visibility', cell: (d) => (d.isPrivate ? 'Private' : 'Public'), narrow: true },
    { label: 'Domain', cell: (d) => d.customDomain ?? '', narrow: true },
  ],
  empty: 'No dashboards. A dashboard shows the state of checks (all, or by tag) on a page of its own.',
  form: {
    blank: () => ({ header: '', customUrl: null, tags: [], isPrivate: false }),
    Fields: DashboardFields,
    owns: ['header', 'customUrl', 'tags', 'description', 'isPrivate', 'sortByStatus', 'keys'],
  },
});
