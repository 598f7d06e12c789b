import { useState } from 'preact/hooks';
import { CHANNEL_TYPES, type ChannelType } from '../../../src/model/alerts.js';
import { allPages, del, get, post } from '../api';
import { ago, time } from '../format';
import { can, useSession } from '../session';
import { Button, confirmAction, Empty, ErrorNote, Field, Loading, useAction, useData } from '../ui';

/** The account's other resources: alert channels and their deliveries, maintenance windows, status pages and incidents, dashboards, private locations. */

const inputValue = (e: Event) => (e.target as HTMLInputElement).value;

interface Channel {
  id: number;
  type: string;
  config: Record<string, unknown>;
  health: { status: string; consecutiveFailures: number; lastDeliveryAt: string | null; lastError: string | null };
  subscriptions: unknown[];
}
interface Notification {
  id: string;
  type: string;
  status: string;
  timestamp: string | null;
  created_at: string;
  checkId: string;
  alertChannelId: number;
  attempts: { at: string; ok: boolean; detail?: string }[];
  notificationResult: string | null;
}

const channelName = (c: Channel) =>
  String(c.config.name ?? c.config.serviceName ?? c.config.address ?? c.config.url ?? c.config.number ?? `${c.type.toLowerCase()} #${c.id}`);
/**
 * What the add form asks for each kind the service delivers to (src/model/alerts.ts): the one value it needs, and how
 * it becomes the channel's config. A kind the service adds and this table lacks does not compile.
 */
const KINDS: Record<ChannelType, { label: string; field: string; error: string; config: (v: string) => Record<string, unknown> }> = {
  EMAIL: { label: 'Email', field: 'Address', error: 'address', config: (v) => ({ address: v }) },
  SLACK: { label: 'Slack', field: 'URL', error: 'url', config: (v) => ({ url: v }) },
  WEBHOOK: { label: 'Webhook', field: 'URL', error: 'url', config: (v) => ({ name: v.replace(/^https?:\/\//, '').slice(0, 60), url: v, method: 'POST' }) },
  SMS: { label: 'SMS', field: 'Phone number (+ and the country code)', error: 'number', config: (v) => ({ number: v.replace(/[\s()-]/g, ''), name: v }) },
  PAGERDUTY: {
    label: 'PagerDuty',
    field: 'Integration key (Events API v2)',
    error: 'serviceKey',
    config: (v) => ({ serviceKey: v, serviceName: 'PagerDuty' }),
  },
  OPSGENIE: { label: 'Opsgenie', field: 'API key', error: 'apiKey', config: (v) => ({ name: 'Opsgenie', apiKey: v, region: 'US', priority: 'P3' }) },
};

export function Alerts() {
  const session = useSession();
  const channels = useData((signal) => allPages<Channel>('/v1/alert-channels', signal), []);
  const log = useData((signal) => get<Notification[]>('/v1/alert-notifications?limit=50', signal), [], 30_000);
  const [kind, setKind] = useState<ChannelType>('EMAIL');
  const [target, setTarget] = useState('');
  const [tested, setTested] = useState<Record<number, { ok: boolean; detail: string }>>({});
  const action = useAction();
  const writer = can(session, 'write');
  const spec = KINDS[kind];
  return (
    <>
      <h1>Alerts</h1>
      <section class="card" aria-labelledby="channels-title">
        <h2 id="channels-title">Alert channels</h2>
        {writer && (
          <form
            class="toolbar"
            onSubmit={(e) => {
              e.preventDefault();
              void action.run(async () => {
                await post('/v1/alert-channels', { type: kind, config: spec.config(target) });
                setTarget('');
                channels.reload();
              });
            }}
          >
            <Field label="Kind">
              <select value={kind} onChange={(e) => setKind(inputValue(e) as ChannelType)}>
                {CHANNEL_TYPES.map((value) => (
                  <option value={value}>{KINDS[value].label}</option>
                ))}
              </select>
            </Field>
            <Field label={spec.field} error={action.fieldError(spec.error)}>
              <input required value={target} onInput={(e) => setTarget(inputValue(e))} />
            </Field>
            <Button kind="primary" type="submit" disabled={action.busy}>
              Add channel
            </Button>
          </form>
        )}
        <ErrorNote error={action.error ?? channels.error} />
        {!channels.data && !channels.error && <Loading />}
        {channels.data?.length === 0 && <Empty>No channels: alerts have nowhere to go.</Empty>}
        {channels.data && channels.data.length > 0 && (
          <div class="table-wrap" tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Channel</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Health</th>
                  <th scope="col" class="num hide-narrow">
                    Subscriptions
                  </th>
                  <th scope="col">
                    <span class="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {channels.data.map((c) => (
                  <tr>
                    <td>
                      {channelName(c)}
                      {tested[c.id] && (
                        <div class={tested[c.id]!.ok ? 'state-passing' : 'state-failing'} role="status">
                          Test {tested[c.id]!.ok ? 'delivered' : 'failed'}: {tested[c.id]!.detail}
                        </div>
                      )}
                    </td>
                    <td>{c.type}</td>
                    <td>
                      {c.health.status.toLowerCase()}
                      {c.health.lastError ? <div class="muted">{c.health.lastError}</div> : null}
                    </td>
                    <td class="num hide-narrow">{c.subscriptions?.length ?? 0}</td>
                    <td class="actions">
                      {writer && (
                        <Button onClick={() => void action.run(async () => setTested({ ...tested, [c.id]: await post(`/v1/alert-channels/${c.id}/test`) }))}>
                          Send a test
                        </Button>
                      )}
                      {writer && (
                        <Button
                          kind="danger"
                          onClick={() => {
                            if (confirmAction(`Delete ${channelName(c)}?`))
                              void action.run(async () => {
                                await del(`/v1/alert-channels/${c.id}`);
                                channels.reload();
                              });
                          }}
                        >
                          Delete
                        </Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section class="card" aria-labelledby="log-title">
        <h2 id="log-title">Notification log</h2>
        <ErrorNote error={log.error} />
        {log.data?.length === 0 && <Empty>No alert was sent yet.</Empty>}
        {log.data && log.data.length > 0 && (
          <div class="table-wrap" tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Delivery</th>
                  <th scope="col">Attempts</th>
                </tr>
              </thead>
              <tbody>
                {log.data.map((n) => (
                  <tr>
                    <td>{time(n.timestamp ?? n.created_at)}</td>
                    <td>
                      {n.type} #{n.alertChannelId}
                    </td>
                    <td>
                      {n.status.toLowerCase()}
                      {n.notificationResult ? <div class="muted">{n.notificationResult}</div> : null}
                    </td>
                    <td>
                      <ul class="plain">
                        {n.attempts.map((a) => (
                          <li>
                            {time(a.at)}: {a.ok ? 'delivered' : 'failed'}
                            {a.detail ? ` (${a.detail})` : ''}
                          </li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

interface Window {
  id: number;
  name: string;
  tags: string[];
  startsAt: string;
  endsAt: string;
  repeatUnit: string | null;
  repeatInterval: number | null;
}

export function Maintenance() {
  const session = useSession();
  const windows = useData((signal) => allPages<Window>('/v1/maintenance-windows', signal), []);
  const [form, setForm] = useState({ name: '', tags: '', startsAt: '', endsAt: '' });
  const action = useAction();
  return (
    <>
      <h1>Maintenance windows</h1>
      {can(session, 'write') && (
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              await post('/v1/maintenance-windows', {
                name: form.name,
                tags: form.tags
                  .split(',')
                  .map((t) => t.trim())
                  .filter(Boolean),
                startsAt: new Date(form.startsAt).toISOString(),
                endsAt: new Date(form.endsAt).toISOString(),
              });
              setForm({ name: '', tags: '', startsAt: '', endsAt: '' });
              windows.reload();
            });
          }}
        >
          <h2>Plan one</h2>
          <div class="toolbar">
            <Field label="Name" error={action.fieldError('name')}>
              <input required value={form.name} onInput={(e) => setForm({ ...form, name: inputValue(e) })} />
            </Field>
            <Field label="Tags" hint="Checks with one of them; none: every check">
              <input value={form.tags} onInput={(e) => setForm({ ...form, tags: inputValue(e) })} />
            </Field>
            <Field label="Starts" error={action.fieldError('startsAt')}>
              <input type="datetime-local" required value={form.startsAt} onInput={(e) => setForm({ ...form, startsAt: inputValue(e) })} />
            </Field>
            <Field label="Ends" error={action.fieldError('endsAt')}>
              <input type="datetime-local" required value={form.endsAt} onInput={(e) => setForm({ ...form, endsAt: inputValue(e) })} />
            </Field>
            <Button kind="primary" type="submit" disabled={action.busy}>
              Save
            </Button>
          </div>
          <ErrorNote error={action.error} />
        </form>
      )}
      <ErrorNote error={windows.error} />
      {windows.data?.length === 0 && <Empty>No maintenance planned.</Empty>}
      {windows.data && windows.data.length > 0 && (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">When</th>
                <th scope="col">Repeats</th>
                <th scope="col">Checks</th>
                <th scope="col">
                  <span class="skip">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {windows.data.map((w) => (
                <tr>
                  <td>{w.name}</td>
                  <td>
                    {time(w.startsAt)} – {time(w.endsAt)}
                  </td>
                  <td>{w.repeatUnit ? `every ${w.repeatInterval ?? 1} ${w.repeatUnit.toLowerCase()}` : 'once'}</td>
                  <td>{w.tags?.length ? w.tags.join(', ') : 'all'}</td>
                  <td>
                    {can(session, 'write') && (
                      <Button
                        kind="danger"
                        onClick={() => {
                          if (confirmAction(`Delete ${w.name}?`))
                            void action.run(async () => {
                              await del(`/v1/maintenance-windows/${w.id}`);
                              windows.reload();
                            });
                        }}
                      >
                        Delete
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

interface StatusPage {
  id: string;
  name: string;
  url: string;
  customDomain: string | null;
  isPrivate: boolean;
}
interface Incident {
  id: string;
  name: string;
  severity: string;
  lastUpdateStatus: string;
  services: { id: string; name: string }[];
  incidentUpdates: { id: string; description: string; status: string; publicIncidentUpdateDate: string }[];
  created_at: string;
}

export function StatusPages() {
  const session = useSession();
  const pages = useData(async (signal) => (await get<{ entries: StatusPage[] }>('/v1/status-pages?limit=100', signal)).entries, []);
  const incidents = useData(async (signal) => (await get<{ entries: Incident[] }>('/v1/status-pages/incidents?limit=50', signal)).entries, [], 30_000);
  const [update, setUpdate] = useState<Record<string, { description: string; status: string }>>({});
  const action = useAction();
  return (
    <>
      <h1>Status pages</h1>
      <ErrorNote error={pages.error} />
      {pages.data?.length === 0 && <Empty>No status page yet.</Empty>}
      {pages.data && pages.data.length > 0 && (
        <ul class="plain">
          {pages.data.map((p) => (
            <li>
              <a href={`/status/${p.url}`}>{p.name}</a>{' '}
              <span class="muted">
                /status/{p.url}
                {p.customDomain ? ` · ${p.customDomain}` : ''}
                {p.isPrivate ? ' · private' : ''}
              </span>
            </li>
          ))}
        </ul>
      )}
      <h2>Incidents</h2>
      <ErrorNote error={incidents.error ?? action.error} />
      {incidents.data?.length === 0 && <Empty>No incidents.</Empty>}
      {incidents.data?.map((i) => {
        const draft = update[i.id] ?? { description: '', status: i.lastUpdateStatus === 'RESOLVED' ? 'RESOLVED' : 'MONITORING' };
        return (
          <section class="card" aria-label={i.name}>
            <h3>
              {i.name}{' '}
              <span class="muted">
                {i.severity.toLowerCase()} · {i.lastUpdateStatus.toLowerCase()}
              </span>
            </h3>
            <p class="muted">{(i.services ?? []).map((s) => s.name).join(', ')}</p>
            <ol class="steps">
              {[...(i.incidentUpdates ?? [])].reverse().map((u) => (
                <li>
                  <strong>{u.status.toLowerCase()}</strong> {time(u.publicIncidentUpdateDate)}: {u.description}
                </li>
              ))}
            </ol>
            {can(session, 'write') && i.lastUpdateStatus !== 'RESOLVED' && (
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
                <Field label="Update">
                  <input required value={draft.description} onInput={(e) => setUpdate({ ...update, [i.id]: { ...draft, description: inputValue(e) } })} />
                </Field>
                <Field label="Status">
                  <select value={draft.status} onChange={(e) => setUpdate({ ...update, [i.id]: { ...draft, status: inputValue(e) } })}>
                    {['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED'].map((s) => (
                      <option value={s}>{s.toLowerCase()}</option>
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
    </>
  );
}

interface Dashboard {
  dashboardId: string;
  header: string | null;
  customUrl: string | null;
  customDomain: string | null;
  isPrivate: boolean;
  tags?: string[];
}

export function Dashboards() {
  const boards = useData((signal) => allPages<Dashboard>('/v1/dashboards', signal), []);
  return (
    <>
      <h1>Dashboards</h1>
      <ErrorNote error={boards.error} />
      {boards.data?.length === 0 && (
        <Empty>
          No dashboards. Make one with <code>POST /v1/dashboards</code> or a project's Dashboard construct.
        </Empty>
      )}
      {boards.data && boards.data.length > 0 && (
        <ul class="plain">
          {boards.data.map((d) => (
            <li>
              {d.customUrl ? <a href={`/dashboards/${d.customUrl}`}>{d.header || d.customUrl}</a> : d.header || d.dashboardId}{' '}
              <span class="muted">
                {d.isPrivate ? 'private · ' : ''}
                {d.tags?.length ? `tags ${d.tags.join(', ')}` : 'every check'}
                {d.customDomain ? ` · ${d.customDomain}` : ''}
              </span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

interface PrivateLocation {
  id: string;
  name: string;
  slugName: string;
  keys: { id: string; maskedKey: string }[];
}
interface LocationMetrics {
  timestamps: string[];
  queueSize: number[];
  oldestScheduledCheckRun: number[];
  runners: number;
}

function LocationRow({ location }: { location: PrivateLocation }) {
  const metrics = useData((signal) => get<LocationMetrics>(`/v1/private-locations/${location.id}/metrics`, signal), [location.id], 30_000);
  const m = metrics.data;
  return (
    <tr>
      <td>
        {location.name} <div class="muted">{location.slugName}</div>
      </td>
      <td class="num">{m ? m.runners : '…'}</td>
      <td class="num">{m ? (m.queueSize.at(-1) ?? 0) : '…'}</td>
      <td class="num">{m ? `${Math.round(m.oldestScheduledCheckRun.at(-1) ?? 0)} s` : '…'}</td>
      <td class="hide-narrow">{location.keys?.length ?? 0}</td>
    </tr>
  );
}

export function PrivateLocations() {
  const locations = useData((signal) => allPages<PrivateLocation>('/v1/private-locations', signal), [], 30_000);
  return (
    <>
      <h1>Private locations</h1>
      <ErrorNote error={locations.error} />
      {locations.data?.length === 0 && <Empty>No private locations. Runners in your own network serve one (see the runners documentation).</Empty>}
      {locations.data && locations.data.length > 0 && (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Location</th>
                <th scope="col" class="num">
                  Runners seen
                </th>
                <th scope="col" class="num">
                  Queued runs
                </th>
                <th scope="col" class="num">
                  Oldest waiting
                </th>
                <th scope="col" class="hide-narrow">
                  Keys
                </th>
              </tr>
            </thead>
            <tbody>
              {locations.data.map((l) => (
                <LocationRow location={l} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="muted">Runner counts cover the last 30 seconds; refreshed every 30 s ({ago(Date.now())}).</p>
    </>
  );
}
