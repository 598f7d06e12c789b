import { Type } from '@sinclair/typebox';

export const PositiveId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
export const NumericIdParams = Type.Object({ id: PositiveId }, { additionalProperties: false });
export const UuidIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export function iso(d: Date): string;
export function iso(d: Date | null | undefined): string | null;
export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** Postgres reports a unique violation as 23505; `constraint` names the index. */
export function uniqueViolation(err: unknown): string | undefined {
  const e = err as { code?: string; constraint_name?: string };
  return e.code === '23505' ? (e.constraint_name ?? '') : undefined;
}

/** Postgres foreign-key violation (23503). */
export function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23503';
}
