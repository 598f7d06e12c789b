/**
 * The alert state machine of one check: pure, so every rule is tested on its own. A check's runs move it
 * between PASSING, DEGRADED and FAILING per its effective alert settings; entering a state (after the
 * escalation threshold), recovering from one, and each reminder while in one raise an alert.
 */

import type { AlertType } from '../model/alerts.js';

export type AlertState = 'PASSING' | 'DEGRADED' | 'FAILING';
export type Outcome = 'pass' | 'degraded' | 'fail';

export interface AlertSettings {
  escalationType: 'RUN_BASED' | 'TIME_BASED';
  /** RUN_BASED: consecutive non-passing runs before an alert. */
  failedRunThreshold: number;
  /** TIME_BASED: minutes failing before an alert. */
  minutesFailingThreshold: number;
  reminders: { amount: number; interval: number };
  parallelRunFailureThreshold: { enabled: boolean; percentage: number };
}

export interface AlertMemory {
  state: AlertState;
  /** Consecutive failing runs, and consecutive degraded runs. */
  failureStreak: number;
  degradedStreak: number;
  /** Start of the current failing (or degraded) stretch, epoch ms. */
  failingSince: number | null;
  remindersSent: number;
  nextReminderAt: number | null;
}

export const FRESH: AlertMemory = { state: 'PASSING', failureStreak: 0, degradedStreak: 0, failingSince: null, remindersSent: 0, nextReminderAt: null };

const MINUTE = 60_000;

/** The alert settings as stored (the anchor's object, any part missing), with the anchor's defaults filled. */
export function normaliseSettings(raw: unknown): AlertSettings {
  const s = (raw ?? {}) as {
    escalationType?: string;
    runBasedEscalation?: { failedRunThreshold?: number };
    timeBasedEscalation?: { minutesFailingThreshold?: number };
    reminders?: { amount?: number; interval?: number };
    parallelRunFailureThreshold?: { enabled?: boolean; percentage?: number };
  };
  return {
    escalationType: s.escalationType === 'TIME_BASED' ? 'TIME_BASED' : 'RUN_BASED',
    failedRunThreshold: Math.max(1, s.runBasedEscalation?.failedRunThreshold ?? 1),
    minutesFailingThreshold: Math.max(1, s.timeBasedEscalation?.minutesFailingThreshold ?? 5),
    reminders: { amount: Math.max(0, s.reminders?.amount ?? 0), interval: Math.max(1, s.reminders?.interval ?? 5) },
    parallelRunFailureThreshold: { enabled: s.parallelRunFailureThreshold?.enabled ?? false, percentage: s.parallelRunFailureThreshold?.percentage ?? 10 },
  };
}

/** Whether a stretch that started at `since` and has `streak` runs has reached the escalation threshold at `now`. */
function escalates(settings: AlertSettings, streak: number, since: number, now: number): boolean {
  return settings.escalationType === 'RUN_BASED' ? streak >= settings.failedRunThreshold : now - since >= settings.minutesFailingThreshold * MINUTE;
}

function entered(memory: AlertMemory, state: AlertState, at: number, settings: AlertSettings): AlertMemory {
  const { amount, interval } = settings.reminders;
  return { ...memory, state, remindersSent: 0, nextReminderAt: amount > 0 ? at + interval * MINUTE : null };
}

/**
 * One run of the check, in order. A failing (or degraded) stretch counts its runs and its start; reaching
 * the threshold enters FAILING (or DEGRADED) with an alert; a passing run ends any stretch, with a recovery
 * alert when one had alerted. Failing and degraded stretches count apart. Reminders are timed from `now`
 * (when the alert goes out), not from the run, which may have started long before it was reported.
 */
export function onRun(memory: AlertMemory, outcome: Outcome, at: number, settings: AlertSettings, now = at): { memory: AlertMemory; alert?: AlertType } {
  if (outcome === 'pass') {
    const alert: AlertType | undefined = memory.state === 'FAILING' ? 'ALERT_RECOVERY' : memory.state === 'DEGRADED' ? 'ALERT_DEGRADED_RECOVERY' : undefined;
    return { memory: FRESH, alert };
  }
  if (outcome === 'fail') {
    const failureStreak = memory.failureStreak + 1;
    const next: AlertMemory = { ...memory, failureStreak, degradedStreak: 0, failingSince: memory.failureStreak > 0 ? memory.failingSince : at };
    if (memory.state === 'FAILING' || !escalates(settings, failureStreak, next.failingSince!, at)) return { memory: next };
    return { memory: entered(next, 'FAILING', now, settings), alert: memory.state === 'DEGRADED' ? 'ALERT_DEGRADED_FAILURE' : 'ALERT_FAILURE' };
  }
  const degradedStreak = memory.degradedStreak + 1;
  const next: AlertMemory = { ...memory, degradedStreak, failureStreak: 0, failingSince: memory.degradedStreak > 0 ? memory.failingSince : at };
  if (memory.state === 'FAILING') return { memory: entered(next, 'DEGRADED', now, settings), alert: 'ALERT_FAILURE_DEGRADED' };
  if (memory.state === 'DEGRADED' || !escalates(settings, degradedStreak, next.failingSince!, at)) return { memory: next };
  return { memory: entered(next, 'DEGRADED', now, settings), alert: 'ALERT_DEGRADED' };
}

/**
 * Time passing without runs: a reminder falls due while the check stays failing or degraded, and a
 * TIME_BASED stretch reaches its threshold.
 */
export function onTick(memory: AlertMemory, now: number, settings: AlertSettings): { memory: AlertMemory; alert?: AlertType } {
  if (memory.state === 'PASSING') {
    if (settings.escalationType === 'TIME_BASED' && memory.failingSince !== null && escalates(settings, 0, memory.failingSince, now)) {
      if (memory.failureStreak > 0) return { memory: entered(memory, 'FAILING', now, settings), alert: 'ALERT_FAILURE' };
      if (memory.degradedStreak > 0) return { memory: entered(memory, 'DEGRADED', now, settings), alert: 'ALERT_DEGRADED' };
    }
    return { memory };
  }
  const { amount, interval } = settings.reminders;
  if (memory.nextReminderAt === null || now < memory.nextReminderAt || memory.remindersSent >= amount) return { memory };
  const remindersSent = memory.remindersSent + 1;
  return {
    memory: { ...memory, remindersSent, nextReminderAt: remindersSent < amount ? memory.nextReminderAt + interval * MINUTE : null },
    alert: memory.state === 'FAILING' ? 'ALERT_FAILURE_REMAIN' : 'ALERT_DEGRADED_REMAIN',
  };
}
