import { createBodySchema } from '../checks/index.js';
import { compileValidator } from '../http/validation.js';
import { type CheckType, SEGMENT_OF } from '../model/checks.js';

const segmentValidators = new Map<string, (v: unknown) => unknown>();

/** A check body of a type checked as `POST /v1/checks/{type}` checks it (defaults filled), compiled once per type. */
export function validatorOf(type: CheckType): (v: unknown) => unknown {
  const segment = SEGMENT_OF[type];
  let v = segmentValidators.get(segment);
  if (!v) segmentValidators.set(segment, (v = compileValidator('body', createBodySchema(segment))));
  return v;
}
