/**
 * What this machine charges for waking a thread: the CPU (`process.cpuUsage`, the scheduler's exact runtime) of an
 * empty `setTimeout` every 20 ms, and of one small piece of work (JSON and objects, about a run's worth) done back to
 * back, every 2 ms and every 20 ms; then the same with two busy loops at the lowest priority keeping both processors
 * awake. On a machine whose processors sleep when idle (a virtual machine, most of all) the sparse figures are
 * several times the back-to-back one: the cost of a small installation, whose threads sleep between runs, that a
 * busy service does not pay (docs/performance.md, "A small installation"). Nothing is sent anywhere.
 *
 *   npm run bench:wakeups
 */
import { spawn } from 'node:child_process';

const unit = () => {
  const kept: unknown[] = [];
  for (let i = 0; i < 300; i++) kept.push(JSON.parse(JSON.stringify({ i, s: 'x'.repeat(50), n: [1, 2, 3] })));
  return kept.length;
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function measure(label: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let c = cpuMs();
  for (let i = 0; i < 300; i++) await sleep(20);
  out['empty wakeup every 20 ms'] = (cpuMs() - c) / 300;
  for (const [name, n, gap] of [
    ['work back to back', 3000, 0],
    ['work every 2 ms', 1000, 2],
    ['work every 20 ms', 300, 20],
  ] as const) {
    c = cpuMs();
    for (let i = 0; i < n; i++) {
      unit();
      if (gap) await sleep(gap);
    }
    out[name] = (cpuMs() - c) / n;
  }
  console.log(label, Object.fromEntries(Object.entries(out).map(([k, v]) => [k, `${v.toFixed(3)} ms`])));
  return out;
}

for (let i = 0; i < 2000; i++) unit(); // optimised before the clock
const quiet = await measure('processors otherwise idle:');
const spinners = [0, 1].map(() => spawn('nice', ['-n', '19', process.execPath, '-e', 'for(;;){}'], { stdio: 'ignore' }));
await sleep(500);
let busy: Record<string, number>;
try {
  busy = await measure('both processors kept busy at the lowest priority:');
} finally {
  for (const s of spinners) s.kill('SIGKILL');
}
const ratio = quiet['work every 20 ms'] / quiet['work back to back'];
console.log(
  `a small piece of work done every 20 ms costs ${ratio.toFixed(1)}× what it costs back to back on this machine; busy: ${(busy['work every 20 ms'] / busy['work back to back']).toFixed(1)}×`,
);
