/** A heartbeat check's settings: a ping is due every `period`, and missing after `grace` more. */
export interface HeartbeatSettings {
  period: number;
  periodUnit: 'seconds' | 'minutes' | 'hours' | 'days';
  grace: number;
  graceUnit: 'seconds' | 'minutes' | 'hours' | 'days';
}

const UNIT_MS = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;

export const periodMs = (h: HeartbeatSettings) => h.period * UNIT_MS[h.periodUnit];
export const graceMs = (h: HeartbeatSettings) => h.grace * UNIT_MS[h.graceUnit];

/** Where heartbeat runs say they ran: pings arrive here, not from a run location. */
export const HEARTBEAT_LOCATION = 'heartbeat';
