import { useState } from 'preact/hooks';
import { del, get, post } from '../api';
import { time } from '../format';
import type { Json } from '../forms/draft';
import { Choice, DraftForm, FormErrors, optionsOf, Rows, Section, TextInput, Toggle, useDraftForm, useFormState } from '../forms/form';
import { resourceScreens } from '../forms/resource';
import { type ApiDocument, bodyOf, choicesAt, type Schema, useOpenApi } from '../forms/schema';
import { valueLabel } from '../forms/words';
import { Link, navigate } from '../router';
import { can, useSession } from '../session';
import { Button, confirmAction, Empty, ErrorNote, Field, Loading, useAction, useData } from '../ui';

/** Status pages (with their cards of services), the services they show, and incidents with their updates. */
interface StatusPage {
  id: string;
  name: string;
  url: string;
  description: string | null;
  customDomain: string | null;
  isPrivate: boolean;
  defaultTheme?: string;
  cards: { id: string; name: string; services: { id: string; name: string }[] }[];
}
interface Service {
  id: string;
  name: string;
}
interface Incident {
  id: string;
  name: string;
  severity: string;
  lastUpdateStatus: string;
  services: Service[];
  incidentUpdates: { id: string; description: string; status: string; publicIncidentUpdateDate: string }[];
  created_at: string;
}

const loadServices = async (signal: AbortSignal) => (await get<{ entries: Service[] }>('/v1/status-pages/services?limit=100', signal)).entries;

/** The services a card or an incident names: one checkbox per service of the account, held as `[{ id }]`. */
function ServicePicker({ path, label, services }: { path: string; label: string; services: Service[] }) {
  const form = useFormState();
  const picked = new Set(((form.value(path) as { id: string }[] | undefined) ?? []).map((s) => s.id));
  const error = form.error(path);
  return (
    <fieldset class={`field choices ${error ? 'invalid' : ''}`}>
      <legend class="label">{label}</legend>
      <div class="choice-grid">
        {services.map((s) => (
          <label class="check-inline">
            <input
              type="checkbox"
              checked={picked.has(s.id)}
              onChange={(e) => {
                const next = new Set(picked);
                if ((e.target as HTMLInputElement).checked) next.add(s.id);
                else next.delete(s.id);
                form.set(
                  path,
                  [...next].map((id) => ({ id })),
                );
              }}
            />
            {s.name}
          </label>
        ))}
        {services.length === 0 && <span class="muted">No services yet: add them under Services on the status pages screen.</span>}
      </div>
      {error && (
        <span class="field-error" role="alert">
          {error}
        </span>
      )}
    </fieldset>
  );
}

function PageFields({ doc, schema }: { doc: ApiDocument; schema: Schema | undefined }) {
  const services = useData(loadServices, []);
  return (
    <>
      <TextInput path="name" label="Name" required />
      <TextInput path="url" label="Address" hint="Letters, digits and dashes: the page is at /status/<address>" required />
      <TextInput path="description" label="Description" multiline={2} empty="null" />
      <TextInput path="customDomain" label="Custom domain" hint="Optional: status.example.com, once its DNS points here" empty="null" />
      <Choice path="defaultTheme" label="Theme" options={optionsOf(choicesAt(doc, schema, 'defaultTheme'))} />
      <Section title="Cards" id="cards-title">
        <ErrorNote error={services.error} />
        <Rows
          path="cards"
          label="Cards"
          hint="Each card groups services under a heading."
          add="Add card"
          blank={() => ({ name: '', services: [] })}
          row={(p) => (
            <>
              <TextInput path={`${p}.name`} label="Card name" empty="string" />
              <ServicePicker path={`${p}.services`} label="Services on it" services={services.data ?? []} />
            </>
          )}
        />
      </Section>
    </>
  );
}

/** The account's services: what status pages and incidents name. */
function Services() {
  const session = useSession();
  const services = useData(loadServices, []);
  const [name, setName] = useState('');
  const action = useAction();
  const writer = can(session, 'write');
  return (
    <section class="card" aria-labelledby="services-title">
      <h2 id="services-title">Services</h2>
      {writer && (
        <form
          class="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              await post('/v1/status-pages/services', { name });
              setName('');
              services.reload();
            });
          }}
        >
          <Field label="New service" error={action.fieldError('name')}>
            <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="Checkout" />
          </Field>
          <Button kind="primary" type="submit" disabled={action.busy}>
            Add service
          </Button>
        </form>
      )}
      <ErrorNote error={action.error && !action.fieldError('name') ? action.error : services.error} />
      {services.data?.length === 0 && <Empty>No services yet.</Empty>}
      <ul class="plain">
        {(services.data ?? []).map((s) => (
          <li class="row-line">
            <span>{s.name}</span>
            {writer && (
              <Button
                kind="danger"
                aria-label={`Delete service ${s.name}`}
                onClick={() => {
                  if (confirmAction(`Delete the service ${s.name}?`))
                    void action.run(async () => {
                      await del(`/v1/status-pages/services/${s.id}`);
                      services.reload();
                    });
                }}
              >
                Delete
              </Button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Open and recent incidents, each with its updates and a form for the next one. */
function Incidents() {
  const session = useSession();
  const incidents = useData(async (signal) => (await get<{ entries: Incident[] }>('/v1/status-pages/incidents?limit=50', signal)).entries, [], 30_000);
  const [update, setUpdate] = useState<Record<string, { description: string; status: string }>>({});
  const action = useAction();
  const writer = can(session, 'write');
  return (
    <section aria-labelledby="incidents-title">
      <div class="title-row">
        <h2 id="incidents-title">Incidents</h2>
        {writer && (
          <Link class="btn btn-primary" href="/status-pages/incidents/new">
            Declare an incident
          </Link>
        )}
      </div>
      <ErrorNote error={incidents.error ?? action.error} />
      {incidents.data?.length === 0 && <Empty>No incidents.</Empty>}
      {incidents.data?.map((i) => {
        const draft = update[i.id] ?? { description: '', status: i.lastUpdateStatus === 'RESOLVED' ? 'RESOLVED' : 'MONITORING' };
        return (
          <section class="card" aria-label={i.name}>
            <h3>
              {i.name}{' '}
              <span class="muted">
                {valueLabel(i.severity)} · {valueLabel(i.lastUpdateStatus)}
              </span>
            </h3>
            <p class="muted">{(i.services ?? []).map((s) => s.name).join(', ')}</p>
            <ol class="steps">
              {[...(i.incidentUpdates ?? [])].reverse().map((u) => (
                <li>
                  <strong>{valueLabel(u.status)}</strong> {time(u.publicIncidentUpdateDate)}: {u.description}
                </li>
              ))}
            </ol>
            {writer && i.lastUpdateStatus !== 'RESOLVED' && (
              <form
                class="toolbar"
                onSubmit={(e) => {
                  e.preventDefault();
                  void action.run(async () => {
                    await post(`/v1/status-pages/incidents/${i.id}/incident-updates`, draft);
                    setUpdate({ ...update, [i.id]: { description: '', status: draft.status } });
                    incidents.reload();
                  });
                }}
              >
                <Field label="Update" error={action.fieldError('description')}>
                  <input
                    value={draft.description}
                    onInput={(e) => setUpdate({ ...update, [i.id]: { ...draft, description: (e.target as HTMLInputElement).value } })}
                  />
                </Field>
                <Field label="Status">
                  <select value={draft.status} onChange={(e) => setUpdate({ ...update, [i.id]: { ...draft, status: (e.target as HTMLSelectElement).value } })}>
                    {['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED'].map((s) => (
                      <option value={s}>{valueLabel(s)}</option>
                    ))}
                  </select>
                </Field>
                <Button kind="primary" type="submit" disabled={action.busy}>
                  Post update
                </Button>
              </form>
            )}
          </section>
        );
      })}
    </section>
  );
}

/** `/status-pages/incidents/new`: name, severity, the services it touches, and its first update. */
export function NewIncident() {
  const session = useSession();
  const { doc, error } = useOpenApi();
  const services = useData(loadServices, []);
  const form = useDraftForm({
    name: '',
    severity: 'MAJOR',
    services: [],
    incidentUpdates: [{ description: '', status: 'INVESTIGATING', notifySubscribers: true }],
  });
  if (!can(session, 'write'))
    return (
      <p class="error" role="alert">
        Your role in this account does not declare incidents.
      </p>
    );
  if (error || services.error) return <ErrorNote error={error ?? services.error} />;
  if (!doc || !services.data) return <Loading what="Loading the form" />;
  const schema = bodyOf(doc, '/v1/status-pages/incidents', 'post');
  return (
    <>
      <p>
        <Link href="/status-pages">← Status pages</Link>
      </p>
      <h1>Declare an incident</h1>
      <DraftForm
        form={form}
        label="Declare an incident"
        onSubmit={async (d: Json) => {
          await post('/v1/status-pages/incidents', d);
          navigate('/status-pages');
        }}
      >
        <TextInput path="name" label="What is happening" placeholder="Checkout is slow" required />
        <Choice path="severity" label="Severity" options={optionsOf(choicesAt(doc, schema, 'severity'))} />
        <ServicePicker path="services" label="Services it touches" services={services.data} />
        <TextInput path="incidentUpdates[0].description" label="First update" multiline={3} empty="string" />
        <Choice path="incidentUpdates[0].status" label="Status" options={optionsOf(choicesAt(doc, schema, 'incidentUpdates[0].status'))} />
        <Toggle path="incidentUpdates[0].notifySubscribers" label="Tell the pages' subscribers" />
        <FormErrors />
        <div class="actions form-actions">
          <Button kind="primary" type="submit" disabled={form.busy}>
            {form.busy ? 'Declaring…' : 'Declare'}
          </Button>
          <Button onClick={() => navigate('/status-pages')}>Cancel</Button>
        </div>
      </DraftForm>
    </>
  );
}

export const statusPageScreens = resourceScreens<StatusPage>({
  noun: 'status page',
  title: 'Status pages',
  href: '/status-pages',
  api: '/v1/status-pages',
  idOf: (p) => p.id,
  nameOf: (p) => p.name,
  load: async (signal) => (await get<{ entries: StatusPage[] }>('/v1/status-pages?limit=100', signal)).entries,
  columns: [
    { label: 'Page', cell: (p) => <a href={`/status/${p.url}`}>{p.name}</a> },
    { label: 'Address', cell: (p) => `/status/${p.url}${p.customDomain ? ` · ${p.customDomain}` : ''}`, narrow: true },
    { label: 'Services', cell: (p) => p.cards.flatMap((c) => c.services).length, num: true },
    { label: 'Visibility', cell: (p) => (p.isPrivate ? 'Private' : 'Public'), narrow: true },
  ],
  empty: 'No status page yet.',
  after: (
    <>
      <Services />
      <Incidents />
    </>
  ),
  form: {
    blank: () => ({ name: '', url: '', defaultTheme: 'AUTO', cards: [{ name: 'Services', services: [] }] }),
    draftOf: (p) => ({
      name: p.name,
      url: p.url,
      description: p.description,
      customDomain: p.customDomain,
      defaultTheme: p.defaultTheme ?? 'AUTO',
      cards: p.cards.map((c) => ({ id: c.id, name: c.name, services: c.services.map((s) => ({ id: s.id })) })),
    }),
    Fields: PageFields,
    owns: ['name', 'url', 'description', 'customDomain', 'defaultTheme', 'cards'],
  },
});
