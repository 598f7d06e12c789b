import { useEffect, useState } from 'preact/hooks';
import { allPages, del, get, post } from '../api';
import { ago, time } from '../format';
import { can, useSession } from '../session';
import { Button, CopyBox, confirmAction, Empty, ErrorNote, Field, Loading, useAction, useData } from '../ui';

/**
 * Private locations and their fleets: each location's agents (online or not, last seen, version, outdated), its runs
 * queued and in flight, and its keys (a new key is shown once, to copy). Refreshed every 10 s; the time of the last
 * answer is shown, and an answer that fails says so.
 */
interface PrivateLocation {
  id: string;
  name: string;
  slugName: string;
  keys: { id: string; maskedKey: string; rawKey?: string; created_at: string }[];
}
interface Fleet {
  agents: {
    id: string;
    version: string;
    isOutdated: boolean;
    online: boolean;
    lastSeenAt: string;
    startedAt: string;
    concurrency: number;
  }[];
  runs: { queued: number; delayed: number; inFlight: number; oldestWaitingSeconds: number };
  checkedAt: string;
}

const REFRESH_MS = 10_000;

/** A clock that re-renders every second, so "n s ago" moves. */
function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}

function FleetOf({ location }: { location: PrivateLocation }) {
  const fleet = useData((signal) => get<Fleet>(`/v1/private-locations/${location.id}/fleet`, signal), [location.id], REFRESH_MS);
  useNow();
  const f = fleet.data;
  const online = f?.agents.filter((a) => a.online) ?? [];
  return (
    <div aria-live="polite">
      <ErrorNote error={fleet.error} />
      {!f && !fleet.error && <Loading what="Asking for its agents" />}
      {f && (
        <>
          <p>
            <strong class={online.length ? 'state-passing' : 'state-failing'}>
              {online.length} of {f.agents.length} agent{f.agents.length === 1 ? '' : 's'} online
            </strong>{' '}
            · {f.runs.queued} run{f.runs.queued === 1 ? '' : 's'} queued · {f.runs.inFlight} in flight
            {f.runs.oldestWaitingSeconds > 0 ? ` · oldest waiting ${Math.round(f.runs.oldestWaitingSeconds)} s` : ''}
          </p>
          {f.agents.length === 0 ? (
            <p class="muted">No agent has connected with a key of this location yet.</p>
          ) : (
            <div class="table-wrap" tabIndex={0}>
              <table>
                <caption class="skip">Agents of {location.name}</caption>
                <thead>
                  <tr>
                    <th scope="col">Agent</th>
                    <th scope="col">State</th>
                    <th scope="col">Last seen</th>
                    <th scope="col">Version</th>
                    <th scope="col" class="num hide-narrow">
                      Runs at once
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {f.agents.map((a) => (
                    <tr data-agent={a.id}>
                      <td>
                        <code>{a.id.slice(0, 12)}</code>
                      </td>
                      <td>{a.online ? <span class="state-passing">Online</span> : <span class="state-failing">Offline</span>}</td>
                      <td title={time(a.lastSeenAt)}>{ago(a.lastSeenAt)}</td>
                      <td>
                        {a.version}
                        {a.isOutdated && <span class="state-degraded"> · outdated</span>}
                      </td>
                      <td class="num hide-narrow">{a.concurrency}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {f.agents.some((a) => a.isOutdated) && (
            <p class="note" data-update-help>
              To update an outdated agent: stop it (it finishes the runs in flight), replace its folder with the new package, and start it again with the same
              data folder (<code>AGENT_DATA_DIR</code>): it keeps its identity and delivers anything it made while cut off.
            </p>
          )}
          <p class="muted">
            Refreshed every {REFRESH_MS / 1000} s · last answer {ago(f.checkedAt)}
          </p>
        </>
      )}
    </div>
  );
}

function Keys({ location, onChange }: { location: PrivateLocation; onChange: () => void }) {
  const session = useSession();
  const [fresh, setFresh] = useState<string | null>(null);
  const action = useAction();
  const admin = can(session, 'write');
  return (
    <div>
      <h3>Keys</h3>
      {fresh && (
        <div class="card notice" role="status">
          <p>
            <strong>The new key, shown this once.</strong> An agent starts with it as <code>API_KEY</code>:
          </p>
          <CopyBox value={fresh} label="The new key" />
        </div>
      )}
      <ul class="plain">
        {location.keys.map((k) => (
          <li class="row-line">
            <code>{k.maskedKey}</code> <span class="muted">made {time(k.created_at)}</span>
            {admin && (
              <Button
                kind="danger"
                aria-label={`Revoke key ${k.maskedKey}`}
                onClick={() => {
                  if (confirmAction(`Revoke the key ${k.maskedKey}? Agents using it stop at their next call.`))
                    void action.run(async () => {
                      await del(`/v1/private-locations/${location.id}/keys/${k.id}`);
                      onChange();
                    });
                }}
              >
                Revoke
              </Button>
            )}
          </li>
        ))}
      </ul>
      {admin && (
        <Button
          onClick={() =>
            void action.run(async () => {
              const key = await post<{ rawKey: string }>(`/v1/private-locations/${location.id}/keys`);
              setFresh(key.rawKey);
              onChange();
            })
          }
        >
          Make a new key
        </Button>
      )}
      <ErrorNote error={action.error} />
    </div>
  );
}

function NewLocation({ onMade }: { onMade: (made: PrivateLocation) => void }) {
  const [form, setForm] = useState({ name: '', slugName: '' });
  const action = useAction();
  return (
    <form
      class="card"
      aria-labelledby="new-location-title"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          onMade(await post<PrivateLocation>('/v1/private-locations', form));
          setForm({ name: '', slugName: '' });
        });
      }}
    >
      <h2 id="new-location-title">New private location</h2>
      <div class="inline-fields">
        <Field label="Name" error={action.fieldError('name')}>
          <input value={form.name} onInput={(e) => setForm({ ...form, name: (e.target as HTMLInputElement).value })} placeholder="Office network" />
        </Field>
        <Field label="Short name" hint="What checks name it by: letters, digits, dashes" error={action.fieldError('slugName')}>
          <input value={form.slugName} onInput={(e) => setForm({ ...form, slugName: (e.target as HTMLInputElement).value })} placeholder="office" />
        </Field>
      </div>
      <ErrorNote error={action.error && !action.fieldError('name') && !action.fieldError('slugName') ? action.error : null} />
      <Button kind="primary" type="submit" disabled={action.busy}>
        Create location
      </Button>
    </form>
  );
}

export function PrivateLocations() {
  const session = useSession();
  const locations = useData((signal) => allPages<PrivateLocation>('/v1/private-locations', signal), []);
  const [made, setMade] = useState<PrivateLocation | null>(null);
  const action = useAction();
  const writer = can(session, 'write');
  return (
    <>
      <h1>Private locations</h1>
      <p class="muted">
        A private location runs checks inside your own network: an agent there takes its runs with one of the location's keys. The agent is a package of its own
        that needs only Node.js 20 or later: your administrator makes it with <code>npm run agent:build</code>, which writes{' '}
        <code>monitoring-agent-&lt;version&gt;.tgz</code>. Unpack it on a machine of that network and start <code>node agent.mjs</code> with the key (the
        agent's documentation has a systemd unit and a container file).
      </p>
      {writer && (
        <NewLocation
          onMade={(m) => {
            setMade(m);
            locations.reload();
          }}
        />
      )}
      {made?.keys[0]?.rawKey && (
        <div class="card notice" role="status">
          <h2>{made.name} is ready</h2>
          <p>Its key, shown this once. Unpack the agent package on a machine of that network and start an agent with it:</p>
          <CopyBox value={made.keys[0].rawKey} label="The location's key" />
          <CopyBox
            value={`API_KEY=${made.keys[0].rawKey} API_URL=${location.origin} AGENT_DATA_DIR=/var/lib/monitoring-agent node agent.mjs`}
            label="The command that starts an agent (in the unpacked package's folder)"
          />
        </div>
      )}
      <ErrorNote error={locations.error ?? action.error} />
      {!locations.data && !locations.error && <Loading />}
      {locations.data?.length === 0 && <Empty>No private locations yet.</Empty>}
      {locations.data?.map((l) => (
        <section class="card" aria-labelledby={`loc-${l.id}`} data-location={l.slugName}>
          <div class="title-row">
            <h2 id={`loc-${l.id}`}>
              {l.name} <span class="muted">({l.slugName})</span>
            </h2>
            {writer && (
              <Button
                kind="danger"
                aria-label={`Delete ${l.name}`}
                onClick={() => {
                  if (confirmAction(`Delete the private location ${l.name}?`))
                    void action.run(async () => {
                      await del(`/v1/private-locations/${l.id}`);
                      locations.reload();
                    });
                }}
              >
                Delete
              </Button>
            )}
          </div>
          <FleetOf location={l} />
          <Keys location={l} onChange={locations.reload} />
        </section>
      ))}
    </>
  );
}
