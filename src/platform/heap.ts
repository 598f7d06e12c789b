import v8 from 'node:v8';

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
