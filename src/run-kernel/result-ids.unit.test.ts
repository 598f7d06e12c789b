import { describe, expect, it } from 'vitest';
import { nameUuid, scheduledResultId } from './result-ids.js';

describe('result ids', () => {
  it('a scheduled slot keeps the id every earlier version gave it (agents cut off from the service make it too)', () => {
    // Written down from the service before uuids were made in a buffer (issue 57): a change here doubles stored runs.
    expect(scheduledResultId('00000000-0000-4000-8000-000000000001', 29400000, 'eu-west-1')).toBe('67b4c563-b583-5b44-a188-f1d2c92a1162');
    expect(nameUuid('lease|abc')).toBe('43d0f0d1-89ea-5f71-b491-ee07b9dee739');
  });
});
