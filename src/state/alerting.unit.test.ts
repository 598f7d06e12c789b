import { describe, expect, it } from 'vitest';
import type { AlertType } from '../model/alerts.js';
import { type AlertMemory, FRESH, normaliseSettings, type Outcome, onRun, onTick } from './alerting.js';

const MIN = 60_000;
const runs = (outcomes: Outcome[], settings = normaliseSettings({}), start = 0, every = MIN) => {
  let memory: AlertMemory = FRESH;
  const alerts: (AlertType | undefined)[] = [];
  outcomes.forEach((o, i) => {
    const r = onRun(memory, o, start + i * every, settings);
    memory = r.memory;
    alerts.push(r.alert);
  });
  return { memory, alerts };
};

describe('the alert state machine', () => {
  it('alerts on the first failing run by default, once, and recovers', () => {
    const { alerts, memory } = runs(['pass', 'fail', 'fail', 'pass', 'pass']);
    expect(alerts).toEqual([undefined, 'ALERT_FAILURE', undefined, 'ALERT_RECOVERY', undefined]);
    expect(memory).toEqual(FRESH);
  });

  it('waits for failedRunThreshold consecutive failures; a pass in between starts over', () => {
    const s = normaliseSettings({ escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 3 } });
    expect(runs(['fail', 'fail', 'pass', 'fail', 'fail'], s).alerts).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(runs(['fail', 'fail', 'fail', 'fail'], s).alerts).toEqual([undefined, undefined, 'ALERT_FAILURE', undefined]);
    // Below the threshold nothing alerted, so nothing recovers.
    expect(runs(['fail', 'fail', 'pass'], s).alerts).toEqual([undefined, undefined, undefined]);
  });

  it('TIME_BASED: alerts once the stretch has lasted the threshold, on a run or as time passes', () => {
    const s = normaliseSettings({ escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 5 } });
    expect(runs(['fail', 'fail', 'fail', 'fail', 'fail', 'fail', 'fail'], s, 0, 2 * MIN).alerts).toEqual([
      undefined,
      undefined,
      undefined,
      'ALERT_FAILURE',
      undefined,
      undefined,
      undefined,
    ]);
    const { memory } = runs(['fail'], s, 0);
    expect(onTick(memory, 4 * MIN, s).alert).toBeUndefined();
    const due = onTick(memory, 5 * MIN, s);
    expect(due.alert).toBe('ALERT_FAILURE');
    expect(due.memory.state).toBe('FAILING');
  });

  it("moves between degraded and failing with the anchor's alert types", () => {
    expect(runs(['degraded', 'degraded', 'fail', 'degraded', 'pass']).alerts).toEqual([
      'ALERT_DEGRADED',
      undefined,
      'ALERT_DEGRADED_FAILURE',
      'ALERT_FAILURE_DEGRADED',
      'ALERT_DEGRADED_RECOVERY',
    ]);
  });

  it('reminds `amount` times every `interval` minutes while failing, and stops on recovery', () => {
    const s = normaliseSettings({ reminders: { amount: 2, interval: 10 } });
    let { memory } = runs(['fail'], s, 0);
    expect(memory.nextReminderAt).toBe(10 * MIN);
    const seen: (AlertType | undefined)[] = [];
    for (const t of [5, 10, 12, 20, 30, 40]) {
      const r = onTick(memory, t * MIN, s);
      memory = r.memory;
      seen.push(r.alert);
    }
    expect(seen).toEqual([undefined, 'ALERT_FAILURE_REMAIN', undefined, 'ALERT_FAILURE_REMAIN', undefined, undefined]);
    expect(onRun(memory, 'pass', 50 * MIN, s).alert).toBe('ALERT_RECOVERY');
    const none = normaliseSettings({ reminders: { amount: 0, interval: 5 } });
    expect(onTick(runs(['fail'], none).memory, 100 * MIN, none).alert).toBeUndefined();
  });

  it('fills the anchor defaults for missing settings', () => {
    expect(normaliseSettings(null)).toEqual({
      escalationType: 'RUN_BASED',
      failedRunThreshold: 1,
      minutesFailingThreshold: 5,
      reminders: { amount: 0, interval: 5 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    });
  });
});
