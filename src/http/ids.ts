import { Type } from '@sinclair/typebox';

/** The canonical textual UUID (any version), as check, account and key ids are written. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A numeric id as Postgres identity columns hand them out. */
export const PositiveId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
export const NumericIdParams = Type.Object({ id: PositiveId }, { additionalProperties: false });
