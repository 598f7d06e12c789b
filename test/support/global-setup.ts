import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** One temporary root for every embedded-engine directory of this run; removed when the run ends. */
export default function setup() {
  const root = mkdtempSync(path.join(os.tmpdir(), 'monitoring-test-'));
  process.env.MONITORING_TEST_ROOT = root;
  return () => rmSync(root, { recursive: true, force: true });
}
