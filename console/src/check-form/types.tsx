import type { FunctionComponent } from 'preact';
import type { CheckType } from '../checks';
import { Choice, Fold, NumberInput, optionsOf, Pairs, Section, TextInput, Toggle, useFormState } from '../forms/form';
import { type ApiDocument, choicesAt, type Schema } from '../forms/schema';
import { SchemaFields } from '../forms/schema-fields';
import { Assertions } from './assertions';
import { CodeInput } from './code-input';

/**
 * What the form lays out for each check type: the fields of its own (a request, a script, a heartbeat), a first
 * draft that works, and whether the service runs it (so it can be tried before saving). A type the service adds
 * needs an entry (the record does not compile without one); its fields still come from the schema until then.
 */
export interface TypeForm {
  /** A new check of the type: a working start. */
  blank: () => Record<string, unknown>;
  /** The type's own part of the form. */
  Fields: FunctionComponent<{ doc: ApiDocument; schema: Schema | undefined }>;
  /** Top-level fields `Fields` lays out (the rest of the schema's go to "More settings"). */
  owns: string[];
  /** Run by the service's runners (not pinged): it has locations, retries, and a "Run" before saving. */
  runs: boolean;
  /** Its runs have a response time (degraded and failing thresholds). */
  timings: boolean;
  /** What "Run" needs before it can run, in words (null: ready). */
  notReady?: (draft: Record<string, unknown>) => string | null;
}

const EXAMPLE_SCRIPT = `const { test, expect } = require('@playwright/test');

// A working start: open a page, check it answered and what it shows, keep a screenshot.
test('home page', async ({ page }, testInfo) => {
  const response = await page.goto('https://example.com/');
  expect(response.status()).toBeLessThan(400);
  await expect(page).toHaveTitle(/Example/);
  // Files are written under the test's output folder; an attached one is kept with the run.
  const shot = testInfo.outputPath('home.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('home', { path: shot, contentType: 'image/png' });
});
`;

const EXAMPLE_MULTISTEP = `const { test, expect } = require('@playwright/test');

// Several API calls in one run, each a step.
test('create and read', async ({ request }) => {
  await test.step('list', async () => {
    const response = await request.get('https://example.com/');
    expect(response.ok()).toBeTruthy();
  });
});
`;

/** The fields of the request the form does not lay out itself, from the schema. */
function MoreRequest({ doc, schema, skip }: { doc: ApiDocument; schema: Schema | undefined; skip: string[] }) {
  return (
    <Fold title="More request settings">
      <SchemaFields doc={doc} schema={schema?.properties?.request} base="request" skip={[...skip, 'assertions']} />
    </Fold>
  );
}

function ApiFields({ doc, schema }: { doc: ApiDocument; schema: Schema | undefined }) {
  const form = useFormState();
  const bodyType = String(form.value('request.bodyType') ?? 'NONE');
  const auth = form.value('request.basicAuth');
  return (
    <>
      <Section title="Request" id="request-title">
        <div class="inline-fields wide-last">
          <Choice path="request.method" label="Method" options={optionsOf(choicesAt(doc, schema, 'request.method'), (v) => v)} />
          <TextInput path="request.url" label="URL" type="url" placeholder="https://api.example.com/health" hint="{{NAME}} puts a variable in" required />
        </div>
        <Pairs path="request.headers" label="Headers" add="Add header" />
        <Pairs path="request.queryParameters" label="Query parameters" add="Add query parameter" />
        <Choice path="request.bodyType" label="Body" options={optionsOf(choicesAt(doc, schema, 'request.bodyType'))} />
        {bodyType !== 'NONE' && <TextInput path="request.body" label="Body text" multiline={6} empty="string" />}
        <Toggle path="request.basicAuth" label="Basic authentication" />
        {auth ? (
          <div class="inline-fields">
            <TextInput path="request.basicAuth.username" label="User name" empty="string" />
            <TextInput path="request.basicAuth.password" label="Password" type="password" empty="string" />
          </div>
        ) : null}
        <div class="inline-fields">
          <Toggle path="request.followRedirects" label="Follow redirects" />
          <Toggle path="request.skipSSL" label="Skip TLS certificate verification" />
        </div>
        <p class="hint">
          A client certificate for the host is used when the account has one (Settings, API: <code>/v1/client-certificates</code>).
        </p>
        <MoreRequest
          doc={doc}
          schema={schema}
          skip={['method', 'url', 'headers', 'queryParameters', 'bodyType', 'body', 'basicAuth', 'followRedirects', 'skipSSL']}
        />
      </Section>
      <Section title="Assertions" id="assertions-title">
        <Assertions doc={doc} schema={schema} path="request.assertions" hideLegend />
      </Section>
      <Fold title="Setup and teardown scripts" paths={['localSetupScript', 'localTearDownScript', 'setupSnippetId', 'tearDownSnippetId']}>
        <CodeInput path="localSetupScript" label="Setup script" hint="Runs before the request; it may change request (the request object)" />
        <CodeInput path="localTearDownScript" label="Teardown script" hint="Runs after the response; response holds it" />
        <NumberInput path="setupSnippetId" label="Setup snippet (its id)" step={1} min={1} empty="null" />
        <NumberInput path="tearDownSnippetId" label="Teardown snippet (its id)" step={1} min={1} empty="null" />
      </Fold>
    </>
  );
}

/** A monitor's target fields and its assertions: the request fields named, laid out in order, the rest folded. */
const monitor =
  (fields: (doc: ApiDocument, schema: Schema | undefined) => preact.ComponentChildren, owned: string[]) =>
  ({ doc, schema }: { doc: ApiDocument; schema: Schema | undefined }) => (
    <>
      <Section title="Target" id="target-title">
        {fields(doc, schema)}
        <MoreRequest doc={doc} schema={schema} skip={owned} />
      </Section>
      <Section title="Assertions" id="assertions-title">
        <Assertions doc={doc} schema={schema} path="request.assertions" hideLegend />
      </Section>
    </>
  );

const ipFamily = (doc: ApiDocument, schema: Schema | undefined) => (
  <Choice path="request.ipFamily" label="IP version" options={optionsOf(choicesAt(doc, schema, 'request.ipFamily'))} none="Either" />
);

function ScriptFields() {
  return (
    <Section title="Script" id="script-title">
      <CodeInput path="script" label="Playwright test" hint="JavaScript or TypeScript; process.env holds the check's variables" rows={18} />
    </Section>
  );
}

function HeartbeatFields({ doc, schema }: { doc: ApiDocument; schema: Schema | undefined }) {
  const units = optionsOf(choicesAt(doc, schema, 'heartbeat.periodUnit'));
  return (
    <Section title="Pings" id="heartbeat-title">
      <p class="hint">
        Your job calls the ping URL (shown once the monitor is saved) each time it runs. No ping within the period and grace: the monitor fails.
      </p>
      <div class="inline-fields">
        <NumberInput path="heartbeat.period" label="Expect a ping every" min={1} step={1} />
        <Choice path="heartbeat.periodUnit" label="Unit" options={units} />
      </div>
      <div class="inline-fields">
        <NumberInput path="heartbeat.grace" label="Grace" hint="How late a ping may be" min={0} step={1} />
        <Choice path="heartbeat.graceUnit" label="Unit" options={units} />
      </div>
    </Section>
  );
}

/** A type with no fields of its own: its settings are the shared ones and "More settings". */
const NoFields = () => null;

const withTarget = (url: (d: Record<string, unknown>) => unknown, what: string) => (d: Record<string, unknown>) =>
  String(url(d) ?? '').trim() ? null : `Give the ${what} first.`;
const req = (d: Record<string, unknown>) => (d.request ?? {}) as Record<string, unknown>;

export const TYPE_FORMS: Record<CheckType, TypeForm> = {
  API: {
    blank: () => ({
      request: {
        method: 'GET',
        url: '',
        headers: [],
        queryParameters: [],
        bodyType: 'NONE',
        body: '',
        followRedirects: true,
        skipSSL: false,
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
      },
    }),
    Fields: ApiFields,
    owns: ['request', 'localSetupScript', 'localTearDownScript', 'setupSnippetId', 'tearDownSnippetId'],
    runs: true,
    timings: true,
    notReady: withTarget((d) => req(d).url, 'URL'),
  },
  URL: {
    blank: () => ({
      request: { url: '', followRedirects: true, assertions: [{ source: 'STATUS_CODE', comparison: 'LESS_THAN', property: '', target: '400' }] },
    }),
    Fields: monitor(
      (doc, schema) => (
        <>
          <TextInput path="request.url" label="URL" type="url" placeholder="https://www.example.com/" required />
          <div class="inline-fields">
            <Toggle path="request.followRedirects" label="Follow redirects" />
            <Toggle path="request.skipSSL" label="Skip TLS certificate verification" />
          </div>
          {ipFamily(doc, schema)}
        </>
      ),
      ['url', 'followRedirects', 'skipSSL', 'ipFamily', 'method'],
    ),
    owns: ['request'],
    runs: true,
    timings: true,
    notReady: withTarget((d) => req(d).url, 'URL'),
  },
  TCP: {
    blank: () => ({ request: { hostname: '', port: 443, assertions: [] } }),
    Fields: monitor(
      (doc, schema) => (
        <>
          <div class="inline-fields wide-first">
            <TextInput path="request.hostname" label="Host" placeholder="db.example.com" required />
            <NumberInput path="request.port" label="Port" min={1} max={65535} step={1} />
          </div>
          <TextInput path="request.data" label="Send after connecting" hint="Optional text written to the connection" empty="null" />
          {ipFamily(doc, schema)}
        </>
      ),
      ['hostname', 'url', 'port', 'data', 'ipFamily'],
    ),
    owns: ['request'],
    runs: true,
    timings: true,
    notReady: withTarget((d) => req(d).hostname ?? req(d).url, 'host'),
  },
  DNS: {
    blank: () => ({
      request: {
        hostname: '',
        recordType: 'A',
        protocol: 'UDP',
        assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', property: '', target: 'NOERROR' }],
      },
    }),
    Fields: monitor(
      (doc, schema) => (
        <>
          <div class="inline-fields wide-first">
            <TextInput path="request.hostname" label="Name to resolve" placeholder="www.example.com" required />
            <Choice path="request.recordType" label="Record type" options={optionsOf(choicesAt(doc, schema, 'request.recordType'), (v) => v)} />
          </div>
          <div class="inline-fields wide-first">
            <TextInput path="request.nameServer" label="Name server" hint="Empty: the runner's resolver" />
            <NumberInput path="request.port" label="Port" min={1} max={65535} step={1} />
            <Choice path="request.protocol" label="Protocol" options={optionsOf(choicesAt(doc, schema, 'request.protocol'))} />
          </div>
        </>
      ),
      ['hostname', 'query', 'recordType', 'nameServer', 'port', 'protocol'],
    ),
    owns: ['request'],
    runs: true,
    timings: true,
    notReady: withTarget((d) => req(d).hostname ?? req(d).query, 'name to resolve'),
  },
  SSL: {
    blank: () => ({ request: { sslConfig: { hostname: '', port: 443, alertDaysBeforeExpiry: 20 }, assertions: [] } }),
    Fields: monitor(
      () => (
        <>
          <div class="inline-fields wide-first">
            <TextInput path="request.sslConfig.hostname" label="Host" placeholder="www.example.com" required />
            <NumberInput path="request.sslConfig.port" label="Port" min={1} max={65535} step={1} />
          </div>
          <NumberInput path="request.sslConfig.alertDaysBeforeExpiry" label="Warn this many days before expiry" min={1} max={365} step={1} />
          <TextInput path="request.sslConfig.serverName" label="Server name (SNI)" hint="Empty: the host" empty="null" />
          <Toggle path="request.sslConfig.skipChainValidation" label="Skip chain validation" />
        </>
      ),
      ['sslConfig'],
    ),
    owns: ['request'],
    runs: true,
    timings: true,
    notReady: withTarget((d) => (req(d).sslConfig as Record<string, unknown> | undefined)?.hostname, 'host'),
  },
  ICMP: {
    blank: () => ({ request: { hostname: '', pingCount: 10, assertions: [] } }),
    Fields: monitor(
      (doc, schema) => (
        <>
          <TextInput path="request.hostname" label="Host" placeholder="gateway.example.com" required />
          <NumberInput path="request.pingCount" label="Pings per run" min={1} max={50} step={1} empty="null" />
          {ipFamily(doc, schema)}
          <div class="inline-fields">
            <NumberInput path="degradedPacketLossThreshold" label="Degraded at packet loss (%)" min={0} max={100} empty="null" />
            <NumberInput path="maxPacketLossThreshold" label="Failing at packet loss (%)" min={0} max={100} empty="null" />
          </div>
        </>
      ),
      ['hostname', 'pingCount', 'ipFamily'],
    ),
    owns: ['request', 'degradedPacketLossThreshold', 'maxPacketLossThreshold'],
    runs: true,
    timings: true,
    notReady: withTarget((d) => req(d).hostname, 'host'),
  },
  GRPC: {
    blank: () => ({ request: { url: '', port: 443, grpcConfig: { mode: 'HEALTH', tls: true, metadata: [] }, assertions: [] } }),
    Fields: monitor(
      (doc, schema) => (
        <>
          <div class="inline-fields wide-first">
            <TextInput path="request.url" label="Server" placeholder="grpc.example.com" required />
            <NumberInput path="request.port" label="Port" min={1} max={65535} step={1} />
          </div>
          <Choice path="request.grpcConfig.mode" label="What to call" options={optionsOf(choicesAt(doc, schema, 'request.grpcConfig.mode'))} />
          <Toggle path="request.grpcConfig.tls" label="TLS" />
          <TextInput
            path="request.grpcConfig.service"
            label="Service"
            hint="Health: the service to ask about (empty: the server). Call: the service's full name"
            empty="null"
          />
          <GrpcCall />
          <Pairs path="request.grpcConfig.metadata" label="Metadata" add="Add metadata" />
        </>
      ),
      ['url', 'port', 'grpcConfig'],
    ),
    owns: ['request'],
    runs: true,
    timings: true,
    notReady: withTarget((d) => req(d).url, 'server'),
  },
  TRACEROUTE: {
    blank: () => ({ request: { url: '', protocol: 'TCP', port: 443, maxHops: 30, assertions: [] } }),
    Fields: monitor(
      (doc, schema) => (
        <>
          <TextInput path="request.url" label="Host" placeholder="www.example.com" required />
          <div class="inline-fields">
            <Choice path="request.protocol" label="Protocol" options={optionsOf(choicesAt(doc, schema, 'request.protocol'))} />
            <NumberInput path="request.port" label="Port" min={1} max={65535} step={1} empty="null" />
            <NumberInput path="request.maxHops" label="Most hops" min={1} max={64} step={1} empty="null" />
          </div>
        </>
      ),
      ['url', 'protocol', 'port', 'maxHops'],
    ),
    owns: ['request'],
    runs: true,
    timings: true,
    notReady: withTarget((d) => req(d).url, 'host'),
  },
  HEARTBEAT: {
    blank: () => ({ heartbeat: { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes' } }),
    Fields: HeartbeatFields,
    owns: ['heartbeat'],
    runs: false,
    timings: false,
  },
  BROWSER: {
    blank: () => ({ script: EXAMPLE_SCRIPT }),
    Fields: ScriptFields,
    owns: ['script'],
    runs: true,
    timings: true,
    notReady: (d) => (String(d.script ?? '').trim() ? null : 'Write the script first.'),
  },
  MULTI_STEP: {
    blank: () => ({ script: EXAMPLE_MULTISTEP }),
    Fields: ScriptFields,
    owns: ['script'],
    runs: true,
    timings: true,
    notReady: (d) => (String(d.script ?? '').trim() ? null : 'Write the script first.'),
  },
  PLAYWRIGHT: {
    blank: () => ({ script: EXAMPLE_SCRIPT }),
    Fields: ScriptFields,
    owns: ['script'],
    runs: true,
    timings: true,
    notReady: (d) => (String(d.script ?? '').trim() || d.codeBundlePath ? null : 'Write the script first.'),
  },
  AGENTIC: {
    blank: () => ({}),
    Fields: NoFields,
    owns: [],
    runs: true,
    timings: false,
  },
};

/** gRPC's method and message, shown when it calls a method (not for a health check). */
function GrpcCall() {
  const form = useFormState();
  if (form.value('request.grpcConfig.mode') !== 'BEHAVIOR') return null;
  return (
    <>
      <TextInput path="request.grpcConfig.method" label="Method" placeholder="Greeter/SayHello" empty="null" />
      <TextInput path="request.grpcConfig.message" label="Request message (JSON)" multiline={4} empty="null" />
      <TextInput path="request.grpcConfig.protoContent" label="Service definition (.proto)" hint="Empty: the server's reflection" multiline={6} empty="null" />
    </>
  );
}
