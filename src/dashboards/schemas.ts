import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Nullable, NumberEnum, StringEnum } from '../http/schemas.js';

/** An http(s) URL: a `javascript:` or `data:` link, logo or favicon would run or hide something in viewers' browsers. */
const Url = Type.String({ format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 2048 });
/** One DNS label: the subdomain under the service's shared domain. */
const DnsLabel = Type.String({ pattern: '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$', maxLength: 63 });
/** A fully qualified host name with at least two labels. */
const Hostname = Type.String({ format: 'hostname', pattern: '^[^.]+(\\.[^.]+)+$', maxLength: 253 });

export const KeyResult = Type.Object({
  id: Type.String({ format: 'uuid' }),
  rawKey: Type.Optional(Type.String({ description: 'The full key; only in the response that creates it' })),
  maskedKey: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const DashboardFields = {
  header: Type.String({ minLength: 1, maxLength: 255 }),
  customUrl: Type.Optional(Nullable(DnsLabel)),
  customDomain: Type.Optional(Nullable(Hostname)),
  logo: Type.Optional(Nullable(Url)),
  favicon: Type.Optional(Nullable(Url)),
  link: Type.Optional(Nullable(Type.Union([Url, Type.Literal('')], { description: 'A URL; empty or null for none' }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
  width: StringEnum(['FULL', '960PX'] as const, { default: 'FULL' }),
  refreshRate: NumberEnum([60, 300, 600] as const, { default: 60 }),
  paginate: Type.Boolean({ default: true }),
  paginationRate: NumberEnum([30, 60, 300] as const, { default: 60 }),
  checksPerPage: Nullable(Type.Integer({ minimum: 1, maximum: 20 }), { default: 15 }),
  useTagsAndOperator: Nullable(Type.Boolean(), { default: false }),
  hideTags: Type.Boolean({ default: false }),
  enableIncidents: Type.Boolean({ default: false }),
  expandChecks: Type.Boolean({ default: false }),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 })),
  showHeader: Type.Boolean({ default: true }),
  showCheckRunLinks: Type.Boolean({ default: false }),
  showGroupNames: Type.Boolean({ default: true }),
  customCSS: Nullable(Type.String({ maxLength: 65536 }), { default: '' }),
  isPrivate: Type.Boolean({ default: false }),
  showP95: Type.Boolean({ default: true }),
  showP99: Type.Boolean({ default: true }),
  sortByStatus: Type.Boolean({ default: false, description: 'Failing checks first' }),
};

export const DashboardBody = Type.Object(
  {
    ...DashboardFields,
    keys: Type.Optional(
      Type.Array(Type.Object({}, { additionalProperties: true }), {
        description: 'Ignored on input: the service creates the key of a private dashboard',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DashboardBody = Static<typeof DashboardBody>;

/** An update as the anchor takes it: any of the fields; they merge onto the stored dashboard. */
export const DashboardUpdate = Type.Object(
  Object.fromEntries(
    Object.entries(DashboardBody.properties).map(([name, schema]) => {
      const { default: _d, ...rest } = schema as TSchema & { default?: unknown };
      return [name, Type.Optional(rest as TSchema)];
    }),
  ),
  { additionalProperties: false },
);
