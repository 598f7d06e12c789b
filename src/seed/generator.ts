import type { ResultItem } from '../ingest/index.js';
import { CHECK_TYPE_FACTS, type CheckType } from '../model/checks.js';
import { deriveSeed, Random } from './random.js';

export interface SeedCheck {
  id: string;
  checkType: CheckType;
  /** Minutes between runs in each location. */
  frequency: number;
  locations: string[];
}

export interface SeedWindow {
  /** Inclusive start and exclusive end, epoch milliseconds. */
  from: number;
  to: number;
  seed: number;
}

/** Typical medians (ms) per type; locations scale them. */
const MEDIAN_MS = {
  API: 180,
  URL: 140,
  BROWSER: 2400,
  MULTI_STEP: 900,
  PLAYWRIGHT: 3200,
  TCP: 35,
  DNS: 25,
  ICMP: 22,
  AGENTIC: 14_000,
  TRACEROUTE: 700,
  SSL: 60,
  GRPC: 90,
  HEARTBEAT: 200,
} satisfies Record<CheckType, number>;

/**
 * Why a failed run failed, as a runner words it: three kinds of failure, each with the parts that vary between
 * runs (times, counts, URLs' paths, ids) that error groups mask. Chosen from the run's own figures, so the random
 * stream (and every other figure of the seed) is what it was before runs carried errors.
 */
function failureMessage(location: string, startedAt: number, duration: number): string {
  const id = (startedAt / 1000).toString(16).padStart(12, '0');
  switch (Math.floor(duration) % 3) {
    case 0:
      return `Timeout ${Math.round(duration)}ms exceeded while waiting for https://shop.test/orders/${id}?from=${location}`;
    case 1:
      return `Expected status 200 but received 503 from https://shop.test/api/cart/${Math.floor(duration) % 97} after ${Math.round(duration)} ms`;
    default:
      return `Error: connect ECONNREFUSED 127.0.0.1:${8000 + (Math.floor(duration) % 1000)} at ${new Date(startedAt).toISOString()}`;
  }
}

const BURST_START = 0.004;
const BURST_CONTINUE = 0.8;

const round = (v: number, digits = 2) => Math.round(v * 10 ** digits) / 10 ** digits;

interface LocationState {
  factor: number;
  failing: boolean;
  /** Seconds after the minute at which this location runs, so locations do not all start together. */
  phase: number;
}

/** Number of runs `generate` yields for a check over the window. */
export function runCount(check: SeedCheck, window: SeedWindow): number {
  return check.locations.length * Math.max(0, Math.ceil((window.to - window.from) / (check.frequency * 60_000)));
}

/**
 * Deterministic runs of one check: every `frequency` minutes in each location, log-normal response times
 * with a per-location offset, failure bursts (a two-state chain), degraded runs, retries and the metrics
 * of the check's type. `index` separates the streams of different checks under the same seed.
 */
export function* generateRuns(check: SeedCheck, window: SeedWindow, index: number): Generator<ResultItem> {
  const rnd = new Random(deriveSeed(window.seed, index));
  const median: number = MEDIAN_MS[check.checkType];
  const states: LocationState[] = check.locations.map(() => ({
    factor: rnd.between(0.7, 1.8),
    failing: false,
    phase: rnd.int(0, 50),
  }));
  const step = check.frequency * 60_000;
  for (let tick = window.from; tick < window.to; tick += step) {
    for (let l = 0; l < check.locations.length; l++) {
      const state = states[l];
      const startedAt = tick + state.phase * 1000 >= window.to ? tick : tick + state.phase * 1000;
      state.failing = state.failing ? rnd.chance(BURST_CONTINUE) : rnd.chance(BURST_START);
      yield makeRun(rnd, check, check.locations[l], startedAt, median * state.factor, state.failing);
    }
  }
}

function makeRun(rnd: Random, check: SeedCheck, location: string, startedAt: number, median: number, failing: boolean): ResultItem {
  const aborted = !failing && rnd.chance(0.0005);
  const hasFailures = failing || aborted;
  const attempts = hasFailures && rnd.chance(0.6) ? 2 : 1;
  let duration = rnd.logNormal(median, 0.35) * (failing ? rnd.between(1.5, 4) : 1);
  duration = round(Math.min(duration, 120_000));
  const isDegraded = !hasFailures && duration > median * 2.2;
  const item: ResultItem = {
    id: rnd.uuid(),
    checkId: check.id,
    checkType: check.checkType,
    runLocation: location,
    startedAt: new Date(startedAt).toISOString(),
    stoppedAt: new Date(startedAt + Math.round(duration)).toISOString(),
    hasFailures,
    hasErrors: failing && rnd.chance(0.5),
    isDegraded,
    aborted,
    attempts,
  };
  switch (check.checkType) {
    case 'API':
    case 'URL': {
      item.responseTime = duration;
      item.statusCode = failing ? (rnd.chance(0.7) ? 503 : 500) : rnd.chance(0.97) ? 200 : 204;
      const dns = round(duration * rnd.between(0.02, 0.08));
      const tcp = round(duration * rnd.between(0.05, 0.12));
      const firstByte = round(duration * rnd.between(0.45, 0.7));
      const wait = round(duration * rnd.between(0.01, 0.03));
      item.timings = { wait, dns, tcp, firstByte, download: round(Math.max(0, duration - dns - tcp - firstByte - wait)) };
      break;
    }
    case 'BROWSER': {
      item.responseTime = duration;
      const ttfb = round(duration * rnd.between(0.05, 0.15));
      const fcp = round(ttfb + duration * rnd.between(0.15, 0.3));
      item.webVitals = {
        TTFB: ttfb,
        FCP: fcp,
        LCP: round(fcp + duration * rnd.between(0.1, 0.4)),
        CLS: round(rnd.logNormal(0.04, 0.8), 4),
        TBT: round(rnd.logNormal(150, 0.6)),
        consoleErrors: rnd.chance(0.1) ? rnd.int(1, 5) : 0,
        networkErrors: failing ? rnd.int(1, 3) : 0,
        userScriptErrors: failing && rnd.chance(0.5) ? 1 : 0,
        documentErrors: rnd.chance(0.02) ? 1 : 0,
      };
      break;
    }
    case 'MULTI_STEP':
    case 'PLAYWRIGHT':
    case 'AGENTIC':
      item.responseTime = duration;
      break;
    case 'GRPC':
      item.responseTime = duration;
      item.grpcStatusCode = failing ? (rnd.chance(0.7) ? 14 : 4) : 0;
      break;
    case 'TRACEROUTE':
      item.responseTime = duration;
      item.hopCount = failing ? rnd.int(3, 30) : rnd.int(8, 16);
      item.finalHopLatency = round(duration * rnd.between(0.03, 0.08));
      break;
    case 'SSL':
      item.handshakeTimeMs = duration;
      item.daysUntilExpiry = failing ? rnd.int(-3, 5) : rnd.int(20, 90);
      break;
    case 'TCP': {
      const dns = round(duration * rnd.between(0.1, 0.3));
      const connection = round(duration * rnd.between(0.3, 0.5));
      item.timings = { total: duration, dns, connection, data: round(Math.max(0, duration - dns - connection)) };
      break;
    }
    case 'DNS':
      item.timings = { total: duration };
      break;
    case 'ICMP': {
      if (failing && rnd.chance(0.5)) {
        item.packetLoss = 100;
        break;
      }
      const avg = duration;
      const spread = avg * rnd.between(0.05, 0.4);
      item.packetLoss = failing ? round(rnd.between(20, 90), 1) : rnd.chance(0.05) ? rnd.int(1, 3) * 10 : 0;
      item.latencyAvg = avg;
      item.latencyMin = round(Math.max(0.1, avg - spread * rnd.between(1, 2)));
      item.latencyMax = round(avg + spread * rnd.between(1, 3));
      item.latencyStdDev = round(spread);
      break;
    }
    case 'HEARTBEAT':
      break;
    default: {
      const unhandled: never = check.checkType;
      throw new Error(`no synthetic runs for ${String(unhandled)} checks`);
    }
  }
  const key = CHECK_TYPE_FACTS[check.checkType].resultKey;
  if (failing && key) (item as Record<string, unknown>)[key] = { errors: [{ message: failureMessage(location, startedAt, duration) }] };
  return item;
}
