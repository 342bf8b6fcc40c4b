import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Context,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { Config } from "../../core/config.ts";

export { SpanKind, SpanStatusCode, type Span };

export interface Tracing {
  tracer: Tracer;
  /** Where spans go: the OTLP exporter, the one given, or an in-memory exporter. */
  exporter: SpanExporter;
  /** Starts the span of one request, as a child of its `traceparent` when it carries a valid one. */
  startRequestSpan(request: Request, name: string): Span;
  /** A child of `parent`. */
  startChild(parent: Span, name: string, attributes?: Record<string, string>): Span;
  /** Sends what is buffered and stops. */
  close(): Promise<void>;
}

/**
 * Tracing of one app instance, or null when `config.tracing` is off. Spans are exported in batches over
 * OTLP/HTTP when `config.otlpTracesUrl` is set; otherwise one at a time to `exporter` (tests pass an
 * `InMemorySpanExporter`) or kept in memory. The provider is not registered globally.
 */
export function createTracing(
  config: Pick<Config, "tracing" | "otlpTracesUrl" | "serviceName">,
  exporter?: SpanExporter,
): Tracing | null {
  if (!config.tracing && !exporter) return null;
  const otlp = !exporter && config.otlpTracesUrl ? new OTLPTraceExporter({ url: config.otlpTracesUrl }) : null;
  const target = exporter ?? otlp ?? new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": config.serviceName }),
    spanProcessors: [otlp ? new BatchSpanProcessor(otlp) : new SimpleSpanProcessor(target)],
  });
  const tracer = provider.getTracer("muster");
  return {
    tracer,
    exporter: target,
    startRequestSpan: (request, name) =>
      tracer.startSpan(name, { kind: SpanKind.SERVER }, parentOf(request.headers.get("traceparent"))),
    startChild: (parent, name, attributes) =>
      tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, trace.setSpan(ROOT_CONTEXT, parent)),
    close: () => provider.shutdown(),
  };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** W3C Trace Context: `00-<trace id>-<parent span id>-<flags>`; all-zero ids are invalid. */
function parentOf(header: string | null): Context {
  const m = header ? TRACEPARENT.exec(header.trim().toLowerCase()) : null;
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: m[1],
    spanId: m[2],
    traceFlags: parseInt(m[3], 16) & TraceFlags.SAMPLED,
    isRemote: true,
  });
}

/** An OpenTelemetry trace id (32 hex digits) in PERSCOM's trace id shape, a UUID: 8-4-4-4-12. */
export function traceIdAsUuid(traceId: string): string {
  return `${traceId.slice(0, 8)}-${traceId.slice(8, 12)}-${traceId.slice(12, 16)}-${traceId.slice(16, 20)}-${traceId.slice(20)}`;
}
