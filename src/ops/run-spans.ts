import { context, ROOT_CONTEXT, type SpanAttributes, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type IdGenerator, RandomIdGenerator, type ReadableSpan, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Middleware } from 'koa';
import { DETAIL_COLUMN, RESULT_DETAIL_KEYS } from '../model/results.js';
import { clickHouseTimeMs } from '../model/time.js';
import type { OtelSettings } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';

/**
 * Each landed run as an OpenTelemetry span (docs/traces.md), sent with the SDK's own OTLP exporter (protobuf over
 * HTTP) in batches, off the ingest path: a slow or absent endpoint never slows a run or a landing; what could not be
 * sent is counted (`otel_run_spans_total{outcome}`) and dropped. A run whose requests carried a `traceparent` is
 * exported under that trace, with the parent id it sent as its own span id: the target's spans hang under it.
 */

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

/** Ids chosen by the caller for the next span, random otherwise (the SDK asks synchronously in startSpan). */
class ChosenIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  next: { traceId?: string; spanId?: string } = {};
  generateTraceId(): string {
    const id = this.next.traceId;
    this.next.traceId = undefined;
    return id ?? this.random.generateTraceId();
  }
  generateSpanId(): string {
    const id = this.next.spanId;
    this.next.spanId = undefined;
    return id ?? this.random.generateSpanId();
  }
}

/** Counts what the exporter could send and what it could not. */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly metrics: Metrics | undefined,
    private readonly logger: Logger,
  ) {}
  private warned = 0;
  export(spans: ReadableSpan[], done: (result: { code: number; error?: Error }) => void): void {
    this.inner.export(spans, (result) => {
      const runs = spans.filter((s) => !s.parentSpanContext || s.parentSpanContext.isRemote).length;
      if (result.code === 0) this.metrics?.runSpansExported.inc({ outcome: 'exported' }, runs);
      else {
        this.metrics?.runSpansExported.inc({ outcome: 'failed' }, runs);
        // One line a minute at most: an endpoint that is down must not flood the log.
        if (Date.now() - this.warned > 60_000) {
          this.warned = Date.now();
          this.logger.warn({ err: result.error?.message, spans: spans.length }, 'run spans could not be exported; they are dropped (otel_run_spans_total)');
        }
      }
      done(result);
    });
  }
  shutdown() {
    return this.inner.shutdown();
  }
  forceFlush() {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** The phases of an HTTP run, in the order they happen. */
const PHASES = ['wait', 'dns', 'tcp', 'tls', 'firstByte', 'download'] as const;

export interface RunSpans {
  /** A batch of stored rows (positional, `columns`): their runs become spans. Never throws, never waits. */
  export(accountId: string, columns: readonly string[], rows: readonly unknown[][]): void;
  close(): Promise<void>;
}

export function runSpans(settings: OtelSettings, logger: Logger, metrics?: Metrics): RunSpans | undefined {
  if (!settings.tracesUrl) return undefined;
  const ids = new ChosenIds();
  const exporter = new CountingExporter(new OTLPTraceExporter({ url: settings.tracesUrl, headers: settings.headers, timeoutMillis: 10_000 }), metrics, logger);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: 20_000, maxExportBatchSize: 512, scheduledDelayMillis: 1000 })],
  });
  const tracer = provider.getTracer('monitoring-service/runs');
  return {
    export(accountId, columns, rows) {
      try {
        const at = (name: string) => columns.indexOf(name);
        const col = {
          check: at('check_id'),
          type: at('check_type'),
          id: at('result_id'),
          started: at('started_at'),
          stopped: at('stopped_at'),
          location: at('run_location'),
          failed: at('has_failures'),
          errored: at('has_errors'),
          degraded: at('is_degraded'),
          rt: at('response_time'),
          status: at('status_code'),
          attempts: at('attempts'),
          detail: at(DETAIL_COLUMN),
        };
        for (const row of rows) {
          let detail: Record<string, { traceId?: unknown; spanId?: unknown; response?: { timingPhases?: Record<string, unknown> } }> = {};
          try {
            detail = col.detail >= 0 && typeof row[col.detail] === 'string' && row[col.detail] ? JSON.parse(row[col.detail] as string) : {};
          } catch {
            detail = {};
          }
          const typed = RESULT_DETAIL_KEYS.map((k) => detail[k]).find((v) => v && typeof v === 'object');
          const traceId = typeof typed?.traceId === 'string' && HEX32.test(typed.traceId) ? typed.traceId : undefined;
          const spanId = typeof typed?.spanId === 'string' && HEX16.test(typed.spanId) ? typed.spanId : undefined;
          const startedAt = clickHouseTimeMs(row[col.started]);
          const stoppedAt = col.stopped >= 0 ? clickHouseTimeMs(row[col.stopped]) : startedAt;
          const failed = row[col.failed] === true || row[col.errored] === true;
          const attributes: SpanAttributes = {
            'account.id': accountId,
            'check.id': String(row[col.check]),
            'check.type': String(row[col.type]),
            'check.location': String(row[col.location]),
            'check.result_id': String(row[col.id]),
            'check.result': failed ? 'failed' : row[col.degraded] === true ? 'degraded' : 'passed',
            'check.synthetic': true,
          };
          if (typeof row[col.rt] === 'number') attributes['check.response_time_ms'] = row[col.rt] as number;
          if (typeof row[col.status] === 'number') attributes['http.response.status_code'] = row[col.status] as number;
          if (typeof row[col.attempts] === 'number') attributes['check.attempts'] = row[col.attempts] as number;
          ids.next = { traceId, spanId };
          const span = tracer.startSpan(`${String(row[col.type])} check run`, { kind: SpanKind.CLIENT, startTime: startedAt, attributes, root: true });
          ids.next = {};
          span.setStatus(failed ? { code: SpanStatusCode.ERROR, message: 'the run failed' } : { code: SpanStatusCode.OK });
          // The phases as child spans, one after the other from the start.
          const phases = typed?.response?.timingPhases;
          if (phases) {
            const parent = trace.setSpan(context.active(), span);
            let t = startedAt;
            for (const phase of PHASES) {
              const ms = phases[phase];
              if (typeof ms !== 'number' || !(ms > 0)) continue;
              tracer.startSpan(phase, { startTime: t }, parent).end(t + ms);
              t += ms;
            }
          }
          span.end(Math.max(startedAt, stoppedAt));
        }
      } catch (err) {
        metrics?.runSpansExported.inc({ outcome: 'dropped' }, rows.length);
        logger.warn({ err: (err as Error).message }, 'runs could not be made into spans');
      }
    },
    async close() {
      await provider.shutdown().catch(() => {});
    },
  };
}

/**
 * The service's own requests as SERVER spans (docs/traces.md), when an endpoint is set: one per request, named by its
 * route template (never the raw path), continuing the trace of a `traceparent` the caller sent. Only the method,
 * route and status are recorded: never headers, query strings or bodies.
 */
export function requestSpans(settings: OtelSettings, logger: Logger, metrics?: Metrics): { middleware: Middleware; close(): Promise<void> } | undefined {
  if (!settings.tracesUrl) return undefined;
  const exporter = new CountingExporter(new OTLPTraceExporter({ url: settings.tracesUrl, headers: settings.headers, timeoutMillis: 10_000 }), metrics, logger);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: 20_000, maxExportBatchSize: 512, scheduledDelayMillis: 1000 })],
  });
  const tracer = provider.getTracer('monitoring-service/http');
  const propagator = new W3CTraceContextPropagator();
  const getter = {
    keys: (h: Record<string, unknown>) => Object.keys(h),
    get: (h: Record<string, unknown>, k: string) => h[k] as string | string[] | undefined,
  };
  return {
    async middleware(ctx, next) {
      const parent = propagator.extract(ROOT_CONTEXT, ctx.headers, getter);
      const span = tracer.startSpan(`${ctx.method} request`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method } }, parent);
      try {
        await next();
      } finally {
        const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? (ctx.state.pageRoute as string | undefined);
        if (route) {
          span.updateName(`${ctx.method} ${route}`);
          span.setAttribute('http.route', route);
        }
        span.setAttribute('http.response.status_code', ctx.status);
        if (ctx.state.requestId) span.setAttribute('request.id', String(ctx.state.requestId));
        if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
    },
    async close() {
      await provider.shutdown().catch(() => {});
    },
  };
}
