import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * How far V8 lets its old generation grow past what survived the last full collection before it collects again:
 * 100 % (twice the live heap). V8's own factor goes up to 4× on a process this size, and the service's heap is mostly
 * short-lived run and job objects, so the committed heap was 1.1 GB with 0.3–0.6 GB live at 50,000 checks. At
 * 10,000 checks the bound took the peak RSS from 852–916 MB to 659–683 MB at no CPU cost the bench could see
 * (bench/README.md, "V8's heap growth bounded").
 */
export const HEAP_GROWING_PERCENT = 100;

/** Called first thing by the process entry (V8 reads the factor at every full collection). */
export function boundHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/** How long after the service listens its start-up memory is given back (giveBackStartMemory). */
export const START_SETTLE_MS = 15_000;

/**
 * Once, `afterMs` after the service listens: one full collection of the kind V8 makes when memory runs short, which
 * also gives the freed pages back to the system. Without V8's memory reducer (nodeHeapFlags) nothing else gives back
 * what start-up left (compiling the sources, migrations, the first reads), so an idle service kept 627 MB where it
 * had kept 392 (bench/README.md, "V8's memory reducer off"). The collection costs a few hundred milliseconds of the
 * main thread, once. `gc` is taken into a context of its own, so no other code of the process sees it. Settles once
 * the collection is made (a bench waits for it, so that what it measures holds none of start-up's cost).
 */
export function giveBackStartMemory(afterMs = START_SETTLE_MS): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      v8.setFlagsFromString('--expose-gc');
      const gc = vm.runInNewContext('gc') as (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      resolve();
    }, afterMs);
    timer.unref();
  });
}

/**
 * V8's young generation: each of its two semi-spaces may grow to this many MB (V8's own limit is 16 on a 64-bit
 * machine). A run, a job and a batch are mostly objects that die young; with a larger nursery fewer of them live
 * through a scavenge and get copied or promoted. At 50,000 one-minute checks, alternated: 0.90–0.92 ms a run against
 * 1.00, the main thread 148–152 s against 163 s for 250,000 runs, and 130–145 MB more at the peak (docs/performance.md,
 * "A larger young generation"). V8 sizes its heap once, as the process starts, so this is a flag of the process:
 * `npm start`, `npm run runner` and `npm run worker` pass it (`nodeHeapFlags`, checked by heap.unit.test.ts).
 */
export const SEMI_SPACE_MB = 64;

/**
 * The threads V8 gives its background work (concurrent marking, parallel scavenges, sweeping, optimising compiles):
 * 1 instead of Node's 4. On this 2-core machine each helper a task wakes costs a wakeup of its own (about 0.3 ms of
 * CPU on a virtual machine whose processors halt when idle), and a small installation's runs come in small bursts
 * that wake them often. Alternated with Node's 4 (issue 57, bench/README.md "V8's helper threads: one instead of
 * four"): 3,000 one-minute checks 1.41–1.47 against 1.57–1.80 ms a run, 50,000 0.731 against 0.763, the main thread
 * the same. The collector still marks and sweeps beside the main thread.
 */
export const V8_POOL_SIZE = 1;

/** The node flags the service's processes start with. */
export const nodeHeapFlags: readonly string[] = [
  `--max-semi-space-size=${SEMI_SPACE_MB}`,
  `--v8-pool-size=${V8_POOL_SIZE}`,
  /*
   * V8's memory reducer off. When a process's allocation slows, the reducer runs full collections to give memory back;
   * a small installation's runs come in bursts a second apart with the process asleep between them, so it ran a pair
   * of them about every minute at 3,000 one-minute checks for nothing (the heap grew back at once), and each full
   * collection throws away optimised code whose embedded objects died (V8's "weak objects" deoptimisation: undici's,
   * the Redis and Postgres clients' and Node's hot functions, optimised again in the seconds after). Alternated (issue
   * 57, bench/README.md "V8's memory reducer off"): 3,000 checks 0.685 against 0.925 ms a run, V8's helper thread 0.49
   * against 1.38 s in two minutes, the peak RSS 70 MB more; 50,000 checks the same; idle 0.28 % of a core against
   * 0.85. What it costs: nothing gives back what start-up left until the old generation has doubled
   * (HEAP_GROWING_PERCENT still bounds it), so an idle service held 627 MB against 392.
   */
  '--no-memory-reducer',
];
