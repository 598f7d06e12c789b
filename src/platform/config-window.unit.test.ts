import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('SCHEDULER_WINDOW_MS', () => {
  it('defaults to 5 s and takes 1 to 10 s', () => {
    expect(loadConfig({}).runner.windowMs).toBe(5000);
    expect(loadConfig({ SCHEDULER_WINDOW_MS: '1000' }).runner.windowMs).toBe(1000);
    expect(loadConfig({ SCHEDULER_WINDOW_MS: '10000' }).runner.windowMs).toBe(10_000);
  });

  it.each(['999', '10001', '0', '-5000', '5 s', '2.5'])('refuses %s at start, naming the setting', (value) => {
    expect(() => loadConfig({ SCHEDULER_WINDOW_MS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ SCHEDULER_WINDOW_MS: value })).toThrow(/SCHEDULER_WINDOW_MS/);
  });
});
