import { get, post, put } from '../api';
import { CHECK_SEGMENTS, type CheckType, TYPE_LABELS } from '../checks';
import { copy, type Json } from '../forms/draft';
import { DraftForm, Fold, FormErrors, type FormState, TextInput, useDraftForm } from '../forms/form';
import { type ApiDocument, bodyOf, checkSegments, isIgnored, resolve, type Schema, useOpenApi } from '../forms/schema';
import { SchemaFields } from '../forms/schema-fields';
import { Link, navigate, useLocation } from '../router';
import { can, useSession } from '../session';
import { Button, ErrorNote, Loading, useData } from '../ui';
import { type Choices, COMMON_FIELDS, CommonFields, servedFirst, useChoices } from './common';
import { Trial } from './trial';
import { TYPE_FORMS } from './types';

/** What each type is for, in a line (the chooser's cards). */
const PURPOSE: Record<CheckType, string> = {
  API: 'Call an HTTP endpoint and assert on its status, body, headers and time.',
  URL: 'See that a page or endpoint answers, and how fast.',
  BROWSER: 'Run a Playwright script in a real browser: a journey, with screenshots.',
  MULTI_STEP: 'Chain API calls in a Playwright script, each a step.',
  PLAYWRIGHT: 'Run a Playwright test suite.',
  HEARTBEAT: 'Your cron job or worker pings a URL; no ping in time, an alert.',
  TCP: 'Open a TCP connection to a host and port.',
  DNS: 'Resolve a name and assert on the answer.',
  SSL: "Watch a certificate's validity and expiry.",
  ICMP: 'Ping a host: latency and packet loss.',
  GRPC: "Call a gRPC server's health check or a method.",
  TRACEROUTE: 'Trace the route to a host, hop by hop.',
  AGENTIC: 'A check an AI agent runs from its goal.',
};

const typeOfSegment = (segment: string) => (Object.entries(CHECK_SEGMENTS) as [CheckType, string][]).find(([, s]) => s === segment)?.[0];

/** Fields of a check as read that are not the body's (or that the API only echoes). */
const READ_ONLY = new Set(['id', 'created_at', 'updated_at', 'alertChannels', 'checkType']);

/** A check as read, as the draft of its type's body: the fields the body takes, nothing the API only echoes. */
function draftOf(doc: ApiDocument, schema: Schema | undefined, check: Json): Json {
  const props = resolve(doc, schema)?.properties ?? {};
  return Object.fromEntries(Object.entries(check).filter(([k]) => props[k] && !READ_ONLY.has(k) && !isIgnored(resolve(doc, props[k]))));
}

/** `/checks/new`: the types to start from, each with what it is for; `?type=api` opens its form. */
export function NewCheck() {
  const { query } = useLocation();
  const { doc, error } = useOpenApi();
  const segment = query.get('type');
  if (error) return <ErrorNote error={error} />;
  if (!doc) return <Loading what="Loading the forms" />;
  if (segment) return <CheckFormScreen doc={doc} segment={segment} />;
  const segments = checkSegments(doc);
  return (
    <>
      <p>
        <Link href="/">← Checks</Link>
      </p>
      <h1>New check</h1>
      <p class="muted">What should it watch?</p>
      <ul class="type-grid">
        {segments.map((s) => {
          const type = typeOfSegment(s);
          return (
            <li>
              <Link class="type-card" href={`/checks/new?type=${s}`}>
                <strong>{type ? TYPE_LABELS[type] : s}</strong>
                <span class="muted">{type ? PURPOSE[type] : doc.paths[`/v1/checks/${s}`]?.post?.summary}</span>
              </Link>
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** `/checks/:id/edit`: the same form, filled in from the check. */
export function EditCheckScreen({ params }: { params: Record<string, string> }) {
  const { doc, error } = useOpenApi();
  const check = useData((signal) => get<Json & { checkType: CheckType; name: string }>(`/v1/checks/${params.id}`, signal), [params.id]);
  if (error || check.error) return <ErrorNote error={error ?? check.error} />;
  if (!doc || !check.data) return <Loading what="Loading the check" />;
  return <CheckFormScreen doc={doc} segment={CHECK_SEGMENTS[check.data.checkType]} check={check.data} />;
}

function CheckFormScreen({ doc, segment, check }: { doc: ApiDocument; segment: string; check?: Json & { id?: unknown; name: string } }) {
  const session = useSession();
  const type = typeOfSegment(segment);
  const schema = bodyOf(doc, `/v1/checks/${segment}`, 'post');
  const choices = useChoices();
  if (!type || !schema)
    return (
      <>
        <h1>New check</h1>
        <ErrorNote error={new Error(`The service takes no checks of type "${segment}".`)} />
        <Link href="/checks/new">Choose a type</Link>
      </>
    );
  if (!can(session, 'write'))
    return (
      <>
        <h1>{check ? `Edit ${check.name}` : 'New check'}</h1>
        <p class="error" role="alert">
          Your role in this account does not change checks.
        </p>
      </>
    );
  if (choices.error) return <ErrorNote error={choices.error} />;
  if (!choices.data) return <Loading what="Loading the form" />;
  return <Form doc={doc} schema={schema} segment={segment} type={type} check={check} choices={choices.data} />;
}

function Form({
  doc,
  schema,
  segment,
  type,
  check,
  choices,
}: {
  doc: ApiDocument;
  schema: Schema;
  segment: string;
  type: CheckType;
  check?: Json & { id?: unknown; name: string };
  choices: Choices;
}) {
  const spec = TYPE_FORMS[type];
  const form = useDraftForm(() =>
    check
      ? draftOf(doc, schema, check)
      : {
          name: '',
          activated: true,
          muted: false,
          tags: [],
          frequency: 10,
          ...(spec.runs ? { locations: [servedFirst(choices.locations)[0]?.region].filter(Boolean) } : {}),
          alertChannelSubscriptions: choices.channels.map((c) => ({ alertChannelId: c.id, activated: true })),
          ...copy(spec.blank()),
        },
  );
  const owned = new Set([...COMMON_FIELDS, ...spec.owns]);
  const rest = Object.keys(resolve(doc, schema)?.properties ?? {}).filter((k) => !owned.has(k) && !READ_ONLY.has(k));
  const label = TYPE_LABELS[type];

  async function save(draft: Json) {
    if (check?.id) {
      await put(`/v1/checks/${segment}/${String(check.id)}`, draft);
      navigate(`/checks/${String(check.id)}`);
    } else {
      // The form's channel choices are the subscriptions: none added behind them.
      const made = await post<{ id: string }>(`/v1/checks/${segment}?autoAssignAlerts=false`, draft);
      navigate(`/checks/${made.id}${type === 'HEARTBEAT' ? '?created=1' : ''}`);
    }
  }

  return (
    <>
      <p>
        <Link href={check?.id ? `/checks/${String(check.id)}` : '/checks/new'}>{check?.id ? `← ${check.name}` : '← Other types'}</Link>
      </p>
      <h1>{check?.id ? `Edit ${check.name}` : `New ${label} ${type === 'HEARTBEAT' ? 'monitor' : 'check'}`}</h1>
      <DraftForm form={form} onSubmit={save} label={check?.id ? `Edit ${check.name}` : `New ${label} check`} class="draft-form check-form">
        <TextInput path="name" label="Name" placeholder={`${label}: what it watches`} required />
        <spec.Fields doc={doc} schema={schema} />
        {spec.runs && (
          <Trial segment={segment} checkId={check?.id ? String(check.id) : undefined} choices={choices} notReady={spec.notReady?.(form.draft) ?? null} />
        )}
        <CommonFields doc={doc} schema={schema} choices={choices} timings={spec.timings} runs={spec.runs} />
        {rest.length > 0 && (
          <Fold title="More settings" paths={rest}>
            <SchemaFields doc={doc} schema={schema} skip={[...owned, ...READ_ONLY]} />
          </Fold>
        )}
        <FormErrors />
        <SaveButtons form={form} cancel={check?.id ? `/checks/${String(check.id)}` : '/'} creating={!check?.id} />
      </DraftForm>
    </>
  );
}

function SaveButtons({ form, cancel, creating }: { form: FormState; cancel: string; creating: boolean }) {
  return (
    <div class="actions form-actions">
      <Button kind="primary" type="submit" disabled={form.busy}>
        {form.busy ? 'Saving…' : creating ? 'Create check' : 'Save changes'}
      </Button>
      <Button onClick={() => navigate(cancel)}>Cancel</Button>
    </div>
  );
}
