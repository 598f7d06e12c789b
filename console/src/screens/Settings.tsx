import { useEffect, useState } from 'preact/hooks';
import { ApiError, del, get, patch, post, put, request } from '../api';
import { ago, time } from '../format';
import { valueLabel } from '../forms/words';
import { Link, setQuery, useLocation } from '../router';
import { can, loadSession, type Role, useSession } from '../session';
import { Button, CopyBox, confirmAction, Empty, ErrorNote, Field, Loading, useAction, useData } from '../ui';

/** Settings: your profile and sign-in, API keys, members and roles, the audit log, the account. */
const TABS = [
  { href: '/settings/profile', label: 'Your profile' },
  { href: '/settings/keys', label: 'API keys', admin: true },
  { href: '/settings/members', label: 'Members' },
  { href: '/settings/audit', label: 'Audit log', admin: true },
  { href: '/settings/account', label: 'Account' },
];

function Tabs() {
  const { path } = useLocation();
  const session = useSession();
  return (
    <nav class="tabs" aria-label="Settings">
      {TABS.filter((t) => !t.admin || can(session, 'admin')).map((t) => (
        <Link href={t.href} aria-current={path === t.href ? 'page' : undefined}>
          {t.label}
        </Link>
      ))}
    </nav>
  );
}

const ROLE_LABELS: Record<Role, string> = { OWNER: 'Owner', ADMIN: 'Admin', READ_WRITE: 'Read & Write', READ_RUN: 'Read & Run', READ_ONLY: 'Read Only' };
const INVITE_ROLES: Role[] = ['ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY'];

/** A form: its values, bound to inputs, and the action that sends them (useAction: busy, error, each field's error). */
function useForm<T extends Record<string, string>>(initial: T) {
  const [values, setValues] = useState(initial);
  const action = useAction();
  const bind = (k: keyof T) => ({ value: values[k], onInput: (e: Event) => setValues({ ...values, [k]: (e.target as HTMLInputElement).value }) });
  return { values, setValues, bind, ...action };
}

export function Profile() {
  const session = useSession()!;
  const pw = useForm({ currentPassword: '', newPassword: '' });
  const [pwDone, setPwDone] = useState(false);
  const [setup, setSetup] = useState<{ secret: string; uri: string } | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const tf = useForm({ code: '', password: '' });
  return (
    <>
      <h1>Settings</h1>
      <Tabs />
      <section class="card" aria-labelledby="profile-title">
        <h2 id="profile-title">{session.user.name || session.user.email}</h2>
        <p>
          {session.user.email} · {session.account ? `${ROLE_LABELS[session.account.role]} of ${session.account.name}` : 'member of no account'}
        </p>
        {session.onlyAccountId && (
          <p class="muted">
            You signed in through {session.account?.name ?? 'this account'}'s identity provider: this session acts for this account only. Sign in with your
            password to set a first password or to set up a second factor.
          </p>
        )}
      </section>
      <section class="card" aria-labelledby="pw-title">
        <h2 id="pw-title">Password</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void pw.run(async () => {
              await post('/v1/auth/password', pw.values.currentPassword ? pw.values : { newPassword: pw.values.newPassword });
              setPwDone(true);
              pw.setValues({ currentPassword: '', newPassword: '' });
            });
          }}
        >
          <Field label="Current password" hint="Leave empty if you have none yet (you signed in with a link)">
            <input type="password" autoComplete="current-password" {...pw.bind('currentPassword')} />
          </Field>
          <Field label="New password" hint="At least 10 characters, not a common one" error={pw.fieldError('newPassword')}>
            <input type="password" autoComplete="new-password" required {...pw.bind('newPassword')} />
          </Field>
          <ErrorNote error={pw.error} />
          {pwDone && <p role="status">Password changed. Your other sessions were signed out.</p>}
          <Button kind="primary" type="submit" disabled={pw.busy}>
            Change password
          </Button>
        </form>
      </section>
      <section class="card" aria-labelledby="tf-title">
        <h2 id="tf-title">Second factor</h2>
        {session.secondFactorRequired && <p class="error">This account requires a second factor: turn yours on to use it.</p>}
        {session.user.twoFactorEnabled && !codes && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void tf.run(async () => {
                await post('/v1/auth/two-factor/disable', tf.values.password ? { password: tf.values.password } : { code: tf.values.code });
                await loadSession();
              });
            }}
          >
            <p>On. Signing in asks for your authenticator's code.</p>
            <Field label="Your password (or a code) to turn it off">
              <input type="password" autoComplete="current-password" {...tf.bind('password')} />
            </Field>
            <ErrorNote error={tf.error} />
            <Button kind="danger" type="submit" disabled={tf.busy}>
              Turn off
            </Button>
          </form>
        )}
        {!session.user.twoFactorEnabled && !setup && (
          <>
            <p>Off. Add a code from an authenticator app (TOTP) to every sign-in.</p>
            <ErrorNote error={tf.error} />
            <Button kind="primary" onClick={() => void tf.run(async () => setSetup(await post('/v1/auth/two-factor/setup')))}>
              Set up
            </Button>
          </>
        )}
        {setup && !codes && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void tf.run(async () => {
                setCodes((await post<{ recoveryCodes: string[] }>('/v1/auth/two-factor/enable', { code: tf.values.code })).recoveryCodes);
              });
            }}
          >
            <p>Scan this code with your authenticator app (or type the key into it), then enter the code it shows.</p>
            <QrCode text={setup.uri} />
            <CopyBox label="Secret key" value={setup.secret} />
            <p>
              <a href={setup.uri}>Open in an authenticator app on this device</a>
            </p>
            <Field label="Code from the app" error={tf.fieldError('code')}>
              <input inputMode="numeric" autoComplete="one-time-code" required {...tf.bind('code')} />
            </Field>
            <ErrorNote error={tf.error} />
            <Button kind="primary" type="submit" disabled={tf.busy}>
              Turn on
            </Button>
          </form>
        )}
        {codes && (
          <>
            <p role="status">
              The second factor is on. Keep these recovery codes somewhere safe: each signs you in once if you lose the app. They are shown only now.
            </p>
            <pre tabIndex={0}>{codes.join('\n')}</pre>
            <div class="actions">
              <Button onClick={() => void navigator.clipboard?.writeText(codes.join('\n'))}>Copy the codes</Button>
              <Button onClick={() => download('recovery-codes.txt', `Recovery codes for ${session.user.email}\n\n${codes.join('\n')}\n`)}>Download them</Button>
            </div>
            <Button
              onClick={() => {
                setCodes(null);
                setSetup(null);
                void loadSession();
              }}
            >
              Done
            </Button>
          </>
        )}
      </section>
      <Identities />
      <UserKeys />
    </>
  );
}

/** A file the browser saves, made here (nothing leaves the page). */
function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The otpauth:// link as a QR code for an authenticator app to scan, drawn here (nothing is sent anywhere to draw it). */
function QrCode({ text }: { text: string }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void import('qrcode').then((qr) =>
      qr
        .toString(text, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' })
        .then((svg) => live && setSrc(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`)),
    );
    return () => {
      live = false;
    };
  }, [text]);
  return src ? <img class="qr" src={src} width={200} height={200} alt="QR code of your second factor's key, for an authenticator app to scan" /> : null;
}

interface Identity {
  id: string;
  accountId: string;
  accountName: string;
  issuer: string;
  subject: string;
  email: string;
  lastUsedAt: string | null;
}

/** The identity providers that sign you in (each to its own account only), and linking this account's. */
function Identities() {
  const session = useSession()!;
  const identities = useData((signal) => get<Identity[]>('/v1/users/me/identities', signal), []);
  const options = useData(
    (signal) =>
      session.account
        ? get<{ oidc: { startUrl: string } | null }>(`/v1/auth/sign-in/options?account=${session.account.id}`, signal)
        : Promise.resolve({ oidc: null }),
    [session.account?.id],
  );
  const action = useAction();
  const linkedHere = identities.data?.some((i) => i.accountId === session.account?.id);
  return (
    <section class="card" aria-labelledby="idp-title">
      <h2 id="idp-title">Identity providers</h2>
      <p class="muted">An account's identity provider signs you in to that account only, and only as an identity linked to you.</p>
      <ErrorNote error={identities.error ?? action.error} />
      {identities.data && identities.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col">Provider</th>
              <th scope="col">Signed in there as</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {identities.data.map((i) => (
              <tr key={i.id}>
                <td>{i.accountName}</td>
                <td>
                  <code>{i.issuer}</code>
                </td>
                <td>{i.email}</td>
                <td>{i.lastUsedAt ? ago(i.lastUsedAt) : 'never'}</td>
                <td>
                  <Button
                    kind="danger"
                    onClick={() => {
                      if (confirmAction(`Stop signing in to ${i.accountName} through ${i.issuer}?`))
                        void action.run(async () => {
                          await del(`/v1/users/me/identities/${i.id}`);
                          identities.reload();
                        });
                    }}
                  >
                    Unlink
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {identities.data?.length === 0 && <p>None linked.</p>}
      {options.data?.oidc && !linkedHere && !session.onlyAccountId && (
        <Button
          kind="primary"
          disabled={action.busy}
          onClick={() =>
            void action.run(async () => {
              const { url } = await post<{ url: string }>('/v1/account/oidc/link', { redirect: '/settings/profile' });
              location.assign(url);
            })
          }
        >
          Link {session.account?.name}'s identity provider
        </Button>
      )}
    </section>
  );
}

interface UserKey {
  id: string;
  name: string;
  maskedKey: string;
  created_at: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revoked_at: string | null;
}

function UserKeys() {
  const keys = useData((signal) => get<UserKey[]>('/v1/users/me/api-keys', signal), []);
  const form = useForm({ name: '', expiresInDays: '' });
  const [created, setCreated] = useState<string | null>(null);
  return (
    <section class="card" aria-labelledby="ukeys-title">
      <h2 id="ukeys-title">Your API keys</h2>
      <p class="muted">A key of yours acts with your role, and stops when you leave the account.</p>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void form.run(async () => {
            const k = await post<{ key: string }>('/v1/users/me/api-keys', {
              name: form.values.name,
              ...(form.values.expiresInDays ? { expiresInDays: Number(form.values.expiresInDays) } : {}),
            });
            setCreated(k.key);
            form.setValues({ name: '', expiresInDays: '' });
            keys.reload();
          });
        }}
      >
        <Field label="Name" error={form.fieldError('name')}>
          <input required {...form.bind('name')} />
        </Field>
        <Field label="Expires in (days)" error={form.fieldError('expiresInDays')}>
          <input type="number" min="1" max="3650" {...form.bind('expiresInDays')} />
        </Field>
        <Button kind="primary" type="submit" disabled={form.busy}>
          Create key
        </Button>
      </form>
      <ErrorNote error={form.error} />
      {created && (
        <div role="status">
          <p>Your new key, shown only now:</p>
          <CopyBox label="New API key" value={created} />
        </div>
      )}
      <KeyTable
        keys={keys.data}
        error={keys.error}
        onRevoke={async (k) => {
          await del(`/v1/users/me/api-keys/${k.id}`);
          keys.reload();
        }}
      />
    </section>
  );
}

function KeyTable({
  keys,
  error,
  onRevoke,
  extra,
}: {
  keys?: (UserKey & { role?: string; createdBy?: string | null })[];
  error?: unknown;
  onRevoke?: (k: UserKey) => Promise<void>;
  extra?: boolean;
}) {
  const [failed, setFailed] = useState<unknown>(null);
  if (error) return <ErrorNote error={error} />;
  if (!keys) return <Loading />;
  if (!keys.length) return <Empty>No keys.</Empty>;
  return (
    <>
      <ErrorNote error={failed} />
      <div class="table-wrap" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              {extra && <th scope="col">Role</th>}
              {extra && (
                <th scope="col" class="hide-narrow">
                  Made by
                </th>
              )}
              <th scope="col">Last used</th>
              <th scope="col" class="hide-narrow">
                Expires
              </th>
              <th scope="col">
                <span class="skip">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr>
                <td>{k.name}</td>
                <td>
                  <code>{k.maskedKey}</code>
                </td>
                {extra && <td>{k.role ? valueLabel(k.role.toUpperCase().replace(/-/g, '_')) : ''}</td>}
                {extra && <td class="hide-narrow">{k.createdBy ?? '—'}</td>}
                <td>{k.lastUsedAt ? ago(k.lastUsedAt) : 'never'}</td>
                <td class="hide-narrow">{k.revoked_at ? `revoked ${ago(k.revoked_at)}` : k.expiresAt ? time(k.expiresAt) : 'never'}</td>
                <td>
                  {onRevoke && !k.revoked_at && (
                    <Button
                      kind="danger"
                      onClick={() => {
                        if (confirmAction(`Revoke ${k.name}? It stops working at once.`)) onRevoke(k).catch(setFailed);
                      }}
                    >
                      Revoke
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

export function Keys() {
  const session = useSession();
  if (!can(session, 'admin'))
    return (
      <>
        <h1>Settings</h1>
        <Tabs />
        <p class="error" role="alert">
          The account's service keys are for its admins. Your own keys are under Your profile.
        </p>
      </>
    );
  return <ServiceKeys />;
}

function ServiceKeys() {
  const keys = useData(
    async (signal) => (await request<(UserKey & { role: string; createdBy: string | null })[]>('GET', '/v1/api-keys?limit=100', undefined, { signal })).data,
    [],
  );
  const form = useForm({ name: '', role: 'read-write' });
  const [created, setCreated] = useState<string | null>(null);
  return (
    <>
      <h1>Settings</h1>
      <Tabs />
      <section class="card" aria-labelledby="keys-title">
        <h2 id="keys-title">Service API keys</h2>
        <p class="muted">Keys of the account for CI and automation: each acts with the role it was made with, whoever uses it.</p>
        <form
          class="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            void form.run(async () => {
              const k = await post<{ key: string }>('/v1/api-keys', form.values);
              setCreated(k.key);
              form.setValues({ name: '', role: 'read-write' });
              keys.reload();
            });
          }}
        >
          <Field label="Name" error={form.fieldError('name')}>
            <input required {...form.bind('name')} />
          </Field>
          <Field label="Role">
            <select {...form.bind('role')} onChange={(e) => form.setValues({ ...form.values, role: (e.target as HTMLSelectElement).value })}>
              <option value="read-only">Read only</option>
              <option value="read-write">Read & write</option>
              <option value="admin">Admin</option>
            </select>
          </Field>
          <Button kind="primary" type="submit" disabled={form.busy}>
            Create key
          </Button>
        </form>
        <ErrorNote error={form.error} />
        {created && (
          <div role="status">
            <p>The new key, shown only now:</p>
            <CopyBox label="New API key" value={created} />
          </div>
        )}
        <KeyTable
          keys={keys.data}
          error={keys.error}
          extra
          onRevoke={async (k) => {
            await del(`/v1/api-keys/${k.id}`);
            keys.reload();
          }}
        />
      </section>
    </>
  );
}

interface Member {
  type: 'member' | 'invite';
  userId?: string;
  id?: string;
  name?: string | null;
  email: string;
  role: Role;
  status: string;
  mfaEnabled?: boolean;
  expiresAt?: string;
  inviterEmail?: string;
}

export function Members() {
  const session = useSession()!;
  const { query } = useLocation();
  const search = query.get('search') ?? '';
  const list = useData(
    async (signal) => (await get<{ members: Member[] }>(`/v1/accounts/me/members${search ? `?search=${encodeURIComponent(search)}` : ''}`, signal)).members,
    [search],
  );
  const invite = useForm({ email: '', role: 'READ_WRITE' });
  const [sent, setSent] = useState<{ email: string; mailSent: boolean; acceptUrl?: string } | null>(null);
  const [failed, setFailed] = useState<unknown>(null);
  const admin = can(session, 'admin');
  const owner = can(session, 'owner');
  const act = (fn: () => Promise<unknown>) => fn().then(() => list.reload(), setFailed);
  return (
    <>
      <h1>Settings</h1>
      <Tabs />
      <section class="card" aria-labelledby="members-title">
        <h2 id="members-title">Members and invitations</h2>
        <search class="toolbar">
          <Field label="Search">
            <input type="search" value={search} onInput={(e) => setQuery({ search: (e.target as HTMLInputElement).value })} />
          </Field>
        </search>
        {admin && (
          <form
            class="toolbar"
            onSubmit={(e) => {
              e.preventDefault();
              void invite.run(async () => {
                const made = await post<{ mailSent?: boolean; acceptUrl?: string }>('/v1/accounts/me/invitations', invite.values);
                setSent({ email: invite.values.email, mailSent: made.mailSent !== false, acceptUrl: made.acceptUrl });
                invite.setValues({ email: '', role: 'READ_WRITE' });
                list.reload();
              });
            }}
          >
            <Field label="Invite by email" error={invite.fieldError('email')}>
              <input type="email" required {...invite.bind('email')} />
            </Field>
            <Field label="Role">
              <select value={invite.values.role} onChange={(e) => invite.setValues({ ...invite.values, role: (e.target as HTMLSelectElement).value })}>
                {INVITE_ROLES.map((r) => (
                  <option value={r}>{ROLE_LABELS[r]}</option>
                ))}
              </select>
            </Field>
            <Button kind="primary" type="submit" disabled={invite.busy}>
              Send invitation
            </Button>
          </form>
        )}
        <ErrorNote error={invite.error ?? failed} />
        {sent && (
          <div class="card notice" role="status">
            {sent.mailSent ? (
              <p>An invitation mail to {sent.email} is on its way.</p>
            ) : (
              <>
                <p>
                  <strong>This service sends no mail</strong> (it has no <code>SMTP_URL</code>): give {sent.email} this link yourself. It works once.
                </p>
                {sent.acceptUrl && <CopyBox value={sent.acceptUrl} label="Invitation link" />}
              </>
            )}
          </div>
        )}
        {list.error && <ErrorNote error={list.error} />}
        {!list.data && !list.error && <Loading />}
        {list.data && (
          <div class="table-wrap" tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Person</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="hide-narrow">
                    Second factor
                  </th>
                  <th scope="col">
                    <span class="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((m) => {
                  const changeable = admin && m.type === 'member' && (m.role !== 'OWNER' || owner) && m.userId !== session.user.id;
                  return (
                    <tr>
                      <td>
                        {m.name && <div>{m.name}</div>}
                        <div class={m.name ? 'muted' : ''}>{m.email}</div>
                      </td>
                      <td>
                        {changeable && m.role !== 'OWNER' ? (
                          <select
                            aria-label={`Role of ${m.email}`}
                            value={m.role}
                            onChange={(e) => void act(() => patch(`/v1/accounts/me/members/${m.userId}`, { role: (e.target as HTMLSelectElement).value }))}
                          >
                            {INVITE_ROLES.map((r) => (
                              <option value={r}>{ROLE_LABELS[r]}</option>
                            ))}
                          </select>
                        ) : (
                          ROLE_LABELS[m.role]
                        )}
                      </td>
                      <td>{m.type === 'invite' ? `${m.status.toLowerCase()} invitation${m.expiresAt ? `, until ${time(m.expiresAt)}` : ''}` : 'active'}</td>
                      <td class="hide-narrow">{m.type === 'member' ? (m.mfaEnabled ? 'on' : 'off') : ''}</td>
                      <td>
                        {changeable && (
                          <Button
                            kind="danger"
                            onClick={() => {
                              if (confirmAction(`Remove ${m.email} from the account?`)) void act(() => del(`/v1/accounts/me/members/${m.userId}`));
                            }}
                          >
                            Remove
                          </Button>
                        )}
                        {admin && m.type === 'invite' && (
                          <Button kind="danger" onClick={() => void act(() => del(`/v1/accounts/me/invitations/${m.id}`))}>
                            Revoke
                          </Button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

interface AuditEntry {
  id: string;
  at: string;
  actor: { type: string; id: string | null; name: string | null };
  operation: string;
  method: string;
  path: string;
  resourceId: string | null;
  fields: string[];
  status: number;
  address: string | null;
}

export function Audit() {
  const { query } = useLocation();
  const operation = query.get('operation') ?? '';
  const before = query.get('before') ?? '';
  const page = useData(
    (signal) =>
      get<{ entries: AuditEntry[]; nextId: string | null }>(
        `/v1/audit-logs?limit=50${operation ? `&operation=${encodeURIComponent(operation)}` : ''}${before ? `&nextId=${before}` : ''}`,
        signal,
      ),
    [operation, before],
  );
  return (
    <>
      <h1>Settings</h1>
      <Tabs />
      <section class="card" aria-labelledby="audit-title">
        <h2 id="audit-title">Audit log</h2>
        <search class="toolbar">
          <Field label="Operation" hint="e.g. createApiCheck, signIn, updateMember">
            <input value={operation} onChange={(e) => setQuery({ operation: (e.target as HTMLInputElement).value, before: null })} />
          </Field>
        </search>
        <ErrorNote error={page.error} />
        {!page.data && !page.error && <Loading />}
        {page.data && page.data.entries.length === 0 && <Empty>Nothing recorded.</Empty>}
        {page.data && page.data.entries.length > 0 && (
          <div class="table-wrap" tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">What</th>
                  <th scope="col" class="hide-narrow">
                    Fields
                  </th>
                  <th scope="col">Status</th>
                  <th scope="col" class="hide-narrow">
                    From
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.entries.map((e) => (
                  <tr>
                    <td>{time(e.at)}</td>
                    <td>{e.actor.name ?? e.actor.type}</td>
                    <td>
                      <code>{e.operation}</code>
                      {e.resourceId && <div class="muted">{e.resourceId}</div>}
                    </td>
                    <td class="hide-narrow">{e.fields.join(', ')}</td>
                    <td>{e.status}</td>
                    <td class="hide-narrow">{e.address}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <div class="actions">
          {before && <Button onClick={() => setQuery({ before: null })}>Newest</Button>}
          {page.data?.nextId && <Button onClick={() => setQuery({ before: page.data!.nextId })}>Older</Button>}
        </div>
      </section>
    </>
  );
}

interface AccountInfo {
  id: string;
  name: string;
  role: Role;
  requireTwoFactor: boolean;
  badgesEnabled: boolean;
  rateLimit: { points: number; windowSeconds: number };
}
interface Oidc {
  issuer: string;
  clientId: string;
  roleClaim: string;
  roleMap: { value: string; role: Role }[];
  defaultRole: Role | null;
  trustProviderMfa: boolean;
  startUrl: string;
}

export function Account() {
  const session = useSession()!;
  const account = useData((signal) => get<AccountInfo>('/v1/account', signal), []);
  const oidc = useData(
    (signal) =>
      can(session, 'admin')
        ? // The sign-in options say whether a provider is set, so the page never asks for one that is not there.
          get<{ oidc: unknown }>(`/v1/auth/sign-in/options?account=${session.account?.id ?? 0}`, signal).then((options) =>
            options.oidc ? get<Oidc>('/v1/account/oidc', signal).catch((e) => (e instanceof ApiError && e.status === 404 ? null : Promise.reject(e))) : null,
          )
        : Promise.resolve(null),
    [],
  );
  const [failed, setFailed] = useState<unknown>(null);
  const form = useForm({ issuer: '', clientId: '', clientSecret: '', roleClaim: 'groups', roleMap: '', defaultRole: '', trustProviderMfa: '' });
  if (!account.data)
    return (
      <>
        <h1>Settings</h1>
        <Tabs />
        <ErrorNote error={account.error} />
        {!account.error && <Loading />}
      </>
    );
  const a = account.data;
  const change = (body: Record<string, unknown>) => patch('/v1/account', body).then(() => account.reload(), setFailed);
  return (
    <>
      <h1>Settings</h1>
      <Tabs />
      <section class="card" aria-labelledby="acct-title">
        <h2 id="acct-title">{a.name}</h2>
        <p class="muted">
          Account id <code>{a.id}</code> · {a.rateLimit.points} requests per {a.rateLimit.windowSeconds} s
        </p>
        <ErrorNote error={failed} />
        <label class="field check-inline">
          <input
            type="checkbox"
            checked={a.badgesEnabled}
            disabled={!can(session, 'admin')}
            onChange={(e) => void change({ badgesEnabled: (e.target as HTMLInputElement).checked })}
          />
          <span>Serve status badges of checks and groups (public images)</span>
        </label>
        <label class="field check-inline">
          <input
            type="checkbox"
            checked={a.requireTwoFactor}
            disabled={!can(session, 'owner')}
            onChange={(e) => void change({ requireTwoFactor: (e.target as HTMLInputElement).checked })}
          />
          <span>Members need a second factor (Owners decide)</span>
        </label>
      </section>
      {can(session, 'admin') && (
        <section class="card" aria-labelledby="oidc-title">
          <h2 id="oidc-title">Sign-in with your identity provider (OpenID Connect)</h2>
          <ErrorNote error={oidc.error} />
          {oidc.data && (
            <>
              <p>
                People sign in at <code>{oidc.data.startUrl}</code> through <code>{oidc.data.issuer}</code> (client <code>{oidc.data.clientId}</code>).
              </p>
              <p>
                Their <code>{oidc.data.roleClaim}</code> claim gives the role:{' '}
                {oidc.data.roleMap.map((m) => `${m.value} → ${ROLE_LABELS[m.role]}`).join(', ') || 'no mapping'}; otherwise{' '}
                {oidc.data.defaultRole ? ROLE_LABELS[oidc.data.defaultRole] : 'no access'}.
              </p>
              <p>
                {oidc.data.trustProviderMfa
                  ? 'The provider asks for a second factor itself: people who sign in through it are not asked for their own code.'
                  : 'People whose own second factor is on are asked for its code after the provider.'}
              </p>
              <Button
                kind="danger"
                onClick={() => {
                  if (confirmAction('Stop signing people in with this provider?')) void del('/v1/account/oidc').then(() => oidc.reload(), setFailed);
                }}
              >
                Remove
              </Button>
            </>
          )}
          {oidc.data === null && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void form.run(async () => {
                  const roleMap = form.values.roleMap
                    .split(',')
                    .map((p) => p.trim())
                    .filter(Boolean)
                    .map((p) => {
                      const [value, role] = p.split('=');
                      return { value: value!.trim(), role: (role ?? '').trim().toUpperCase() };
                    });
                  await put('/v1/account/oidc', {
                    issuer: form.values.issuer,
                    clientId: form.values.clientId,
                    clientSecret: form.values.clientSecret,
                    roleClaim: form.values.roleClaim || 'groups',
                    roleMap,
                    defaultRole: form.values.defaultRole || null,
                    trustProviderMfa: form.values.trustProviderMfa === 'yes',
                  });
                  oidc.reload();
                });
              }}
            >
              <p class="muted">
                Register <code>{location.origin}/v1/auth/oidc/callback</code> as the redirect URI at the provider.
              </p>
              <Field label="Issuer URL" error={form.fieldError('issuer')}>
                <input type="url" required {...form.bind('issuer')} />
              </Field>
              <Field label="Client id" error={form.fieldError('clientId')}>
                <input required {...form.bind('clientId')} />
              </Field>
              <Field label="Client secret" error={form.fieldError('clientSecret')}>
                <input type="password" required autoComplete="off" {...form.bind('clientSecret')} />
              </Field>
              <Field label="Role claim">
                <input {...form.bind('roleClaim')} />
              </Field>
              <Field label="Groups to roles" hint="sre=ADMIN, developers=READ_WRITE" error={form.fieldError('roleMap')}>
                <input {...form.bind('roleMap')} />
              </Field>
              <Field label="Role of everyone else">
                <select
                  value={form.values.defaultRole}
                  onChange={(e) => form.setValues({ ...form.values, defaultRole: (e.target as HTMLSelectElement).value })}
                >
                  <option value="">No access</option>
                  {INVITE_ROLES.map((r) => (
                    <option value={r}>{ROLE_LABELS[r]}</option>
                  ))}
                </select>
              </Field>
              <label class="field check-inline">
                <input
                  type="checkbox"
                  checked={form.values.trustProviderMfa === 'yes'}
                  onChange={(e) => form.setValues({ ...form.values, trustProviderMfa: (e.target as HTMLInputElement).checked ? 'yes' : '' })}
                />
                <span>The provider asks for a second factor itself: do not ask people for their own code after it</span>
              </label>
              <ErrorNote error={form.error} />
              <Button kind="primary" type="submit" disabled={form.busy}>
                Save
              </Button>
            </form>
          )}
        </section>
      )}
    </>
  );
}
