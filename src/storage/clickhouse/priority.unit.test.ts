import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BACKGROUND_NICENESS, enginePriorities, inBackground, threadsAtNiceness } from './priority.js';

const linux = process.platform === 'linux';
/** Whether threads are put back here (Linux, niceness 0, CAP_SYS_NICE). */
const mayLower = enginePriorities;

/** A thread that niced itself as one the engine starts during a niced statement is, and waits to be told to end. */
async function nicedThread(): Promise<{ tid: string; end: () => Promise<number> }> {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads'); const os = require('node:os'); const fs = require('node:fs');
     os.setPriority(0, ${BACKGROUND_NICENESS});
     parentPort.postMessage(fs.readlinkSync('/proc/thread-self').split('/').pop());
     parentPort.on('message', () => { parentPort.postMessage(String(os.getPriority(0))); });`,
    { eval: true },
  );
  const tid = await new Promise<string>((resolve) => worker.once('message', resolve));
  return {
    tid,
    end: async () => {
      const seen = new Promise<string>((resolve) => worker.once('message', resolve));
      worker.postMessage('niceness?');
      const niceness = Number(await seen);
      await worker.terminate();
      return niceness;
    },
  };
}

describe.skipIf(!linux)('background statements', () => {
  it('put back the threads left at the background niceness once none is under way, not before', async () => {
    const thread = await nicedThread();
    try {
      expect(threadsAtNiceness(BACKGROUND_NICENESS)).toContain(thread.tid);
      let release!: () => void;
      const first = inBackground(() => new Promise<void>((r) => (release = r)));
      // A second statement ends while the first still runs: nothing is put back under the first.
      await inBackground(async () => undefined);
      expect(threadsAtNiceness(BACKGROUND_NICENESS)).toContain(thread.tid);
      release();
      await first;
      if (mayLower) expect(threadsAtNiceness(BACKGROUND_NICENESS)).not.toContain(thread.tid);
      else expect(threadsAtNiceness(BACKGROUND_NICENESS)).toContain(thread.tid);
    } finally {
      const niceness = await thread.end();
      if (mayLower) expect(niceness).toBe(os.getPriority());
    }
  });

  it('a statement that fails puts them back too, and its error reaches the caller', async () => {
    const thread = await nicedThread();
    try {
      await expect(inBackground(() => Promise.reject(new Error('engine said no')))).rejects.toThrow('engine said no');
      if (mayLower) expect(threadsAtNiceness(BACKGROUND_NICENESS)).not.toContain(thread.tid);
    } finally {
      await thread.end();
    }
  });
});
