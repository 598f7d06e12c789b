import { useState } from 'preact/hooks';
import { allPages, get, post } from '../api';
import { channelName } from '../check-form/common';
import { time } from '../format';
import { copy, type Json } from '../forms/draft';
import { NumberInput, Section, Toggle, useFormState } from '../forms/form';
import { resourceScreens } from '../forms/resource';
import { type ApiDocument, resolve, type Schema, taggedBranches } from '../forms/schema';
import { SchemaFields } from '../forms/schema-fields';
import { valueLabel } from '../forms/words';
import { can, useSession } from '../session';
import { Button, Empty, ErrorNote, useData } from '../ui';

/** Alert channels (every kind the API takes, each with its own fields, and a test message) and the log of what was sent. */
interface Channel {
  id: number;
  type: string;
  config: Record<string, unknown>;
  health: { status: string; consecutiveFailures: number; lastDeliveryAt: string | null; lastError: string | null };
  subscriptions: unknown[];
  sendRecovery?: boolean;
  sendFailure?: boolean;
  sendDegraded?: boolean;
  sslExpiry?: boolean;
  sslExpiryThreshold?: number;
  autoSubscribe?: boolean;
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

/** Words for a kind's config fields where the field's name says too little. */
const CONFIG_LABELS: Record<string, string> = {
  address: 'Email address',
  url: 'URL',
  channel: 'Slack channel (optional)',
  number: 'Phone number',
  serviceKey: 'Integration key (Events API v2)',
  serviceName: 'Service name',
  apiKey: 'API key',
  template: 'Body template',
  name: 'Name',
};
const CONFIG_HINTS: Record<string, string> = {
  number: 'With + and the country code, for example +31612345678',
  template: "Handlebars: {{CHECK_NAME}}, {{ALERT_TITLE}}, {{RESULT_LINK}} and the anchor's other variables",
  url: 'Where the message is sent',
};

const OPTIONS = ['sendFailure', 'sendRecovery', 'sendDegraded', 'sslExpiry', 'sslExpiryThreshold', 'autoSubscribe'];

function branchOf(doc: ApiDocument, schema: Schema | undefined, type: string): Schema | undefined {
  return taggedBranches(doc, schema, 'type').find((b) => b.value === type)?.schema;
}

/** A new channel of a kind: its branch's defaults. */
function blankOf(doc: ApiDocument, schema: Schema | undefined, type: string): Json {
  const branch = branchOf(doc, schema, type);
  const defaults = Object.fromEntries(OPTIONS.map((k) => [k, resolve(doc, branch?.properties?.[k])?.default]).filter(([, v]) => v !== undefined));
  return { type, config: {}, ...defaults };
}

function ChannelFields({ doc, schema, editing }: { doc: ApiDocument; schema: Schema | undefined; editing: boolean }) {
  const form = useFormState();
  const kinds = taggedBranches(doc, schema, 'type');
  const type = String(form.value('type') ?? kinds[0]?.value ?? '');
  const branch = branchOf(doc, schema, type);
  return (
    <>
      <Section title="Where alerts go" id="where-title">
        {editing ? (
          <p>
            Kind: <strong>{valueLabel(type)}</strong>
          </p>
        ) : (
          <div class="field">
            <label class="label" for="channel-kind">
              Kind
            </label>
            <select
              id="channel-kind"
              value={type}
              onChange={(e) => {
                const next = (e.target as HTMLSelectElement).value;
                const fresh = blankOf(doc, schema, next);
                for (const [k, v] of Object.entries(fresh)) form.set(k, copy(v));
              }}
            >
              {kinds.map((k) => (
                <option value={k.value}>{valueLabel(k.value)}</option>
              ))}
            </select>
          </div>
        )}
        <SchemaFields doc={doc} schema={branch?.properties?.config} base="config" labels={CONFIG_LABELS} hints={CONFIG_HINTS} />
      </Section>
      <Section title="What it sends" id="what-title">
        <div class="inline-fields">
          <Toggle path="sendFailure" label="Failures" />
          <Toggle path="sendRecovery" label="Recoveries" />
          <Toggle path="sendDegraded" label="Degradations" />
        </div>
        <Toggle path="sslExpiry" label="Certificates about to expire" />
        {Boolean(form.value('sslExpiry')) && <NumberInput path="sslExpiryThreshold" label="Days before expiry" min={1} max={30} step={1} />}
        <Toggle path="autoSubscribe" label="Subscribe every check created from now on" />
      </Section>
    </>
  );
}

/** Sends a test message through the channel and says what the far end answered. */
function TestButton({ channel }: { channel: Channel }) {
  const [outcome, setOutcome] = useState<{ ok: boolean; detail: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <>
      <Button
        disabled={busy}
        aria-label={`Send a test to ${channelName(channel)}`}
        onClick={() => {
          setBusy(true);
          setError(null);
          post<{ ok: boolean; detail: string }>(`/v1/alert-channels/${channel.id}/test`)
            .then(setOutcome, setError)
            .finally(() => setBusy(false));
        }}
      >
        {busy ? 'Sending…' : 'Send a test'}
      </Button>
      {outcome && (
        <span class={outcome.ok ? 'state-passing' : 'state-failing'} role="status">
          Test {outcome.ok ? 'delivered' : 'failed'}: {outcome.detail}
        </span>
      )}
      <ErrorNote error={error} />
    </>
  );
}

function NotificationLog() {
  const log = useData((signal) => get<Notification[]>('/v1/alert-notifications?limit=50', signal), [], 30_000);
  const channels = useData((signal) => allPages<Channel>('/v1/alert-channels', signal), []);
  const byId = new Map((channels.data ?? []).map((c) => [c.id, c]));
  return (
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
              {log.data.map((n) => {
                const c = byId.get(n.alertChannelId);
                return (
                  <tr>
                    <td>{time(n.timestamp ?? n.created_at)}</td>
                    <td>
                      {c ? channelName(c) : 'A deleted channel'} <span class="muted">{valueLabel(n.type)}</span>
                    </td>
                    <td>
                      {valueLabel(n.status)}
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
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function ChannelTestAction({ channel }: { channel: Channel }) {
  const session = useSession();
  return can(session, 'write') ? <TestButton channel={channel} /> : null;
}

export const channelScreens = resourceScreens<Channel>({
  noun: 'alert channel',
  title: 'Alert channels',
  href: '/alerts',
  api: '/v1/alert-channels',
  idOf: (c) => c.id,
  nameOf: channelName,
  load: (signal) => allPages<Channel>('/v1/alert-channels', signal),
  columns: [
    { label: 'Channel', cell: (c) => channelName(c) },
    { label: 'Kind', cell: (c) => valueLabel(c.type) },
    {
      label: 'Health',
      cell: (c) => (
        <>
          {valueLabel(c.health.status)}
          {c.health.lastError ? <div class="muted">{c.health.lastError}</div> : null}
        </>
      ),
    },
    { label: 'Checks and groups', cell: (c) => c.subscriptions?.length ?? 0, narrow: true, num: true },
  ],
  empty: 'No channels: alerts have nowhere to go.',
  rowActions: (c) => <ChannelTestAction channel={c} />,
  after: <NotificationLog />,
  form: {
    blank: (doc, schema) => blankOf(doc, schema, taggedBranches(doc, schema, 'type')[0]?.value ?? 'EMAIL'),
    draftOf: (c) => ({
      type: c.type,
      config: c.config,
      ...Object.fromEntries(OPTIONS.map((k) => [k, (c as unknown as Json)[k]]).filter(([, v]) => v !== undefined)),
    }),
    Fields: ChannelFields,
    owns: ['type', 'config', 'subscriptions', ...OPTIONS],
  },
});
