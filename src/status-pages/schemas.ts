import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../http/schemas.js';
import { PROGRESS, SEVERITIES } from './incident-repository.js';

/** A colour the page's CSS takes as it is: `#RGB` or `#RRGGBB`, nothing else (stored upper case, as the anchor shows it). */
const Colour = Type.String({ pattern: '^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$' });
export const COLOUR_FIELDS = [
  'bodyBackgroundColor',
  'headerBackgroundColor',
  'headerFontColor',
  'titleFontColor',
  'bodyFontColor',
  'bodyFontColorMuted',
  'navigationFontColor',
  'linkFontColor',
  'cardBackgroundColor',
  'borderColor',
  'primaryButtonBackgroundColor',
  'primaryButtonFontColor',
] as const;
const Palette = Type.Object(Object.fromEntries(COLOUR_FIELDS.map((f) => [f, Colour])) as Record<(typeof COLOUR_FIELDS)[number], typeof Colour>, {
  additionalProperties: false,
});
export type Palette = Static<typeof Palette>;
const ThemeColors = Type.Object({ light: Palette, dark: Palette }, { additionalProperties: false });

const HttpUrl = Type.String({ maxLength: 2048, pattern: '^https?://[^\\s]+$', description: 'An http(s) URL' });
/** The page's address under /status/: lower-case letters, digits and dashes (upper case is lowered). */
const Slug = Type.String({ minLength: 1, maxLength: 63, pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$' });
const Domain = Type.String({ maxLength: 253, pattern: '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$' });
const Id = Type.String({ format: 'uuid' });

/** A card's service, named by id (the anchor's clients send whole service objects: the rest is ignored). */
const ServiceRef = Type.Object({ id: Id }, { additionalProperties: true });
const CardBody = Type.Object(
  {
    id: Type.Optional(Id),
    statusPageId: Type.Optional(Id),
    name: Type.String({ minLength: 1, maxLength: 255 }),
    services: Type.Optional(Type.Array(ServiceRef, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const StatusPageBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    url: Slug,
    customDomain: Type.Optional(Nullable(Domain)),
    themeColors: Type.Optional(Nullable(ThemeColors)),
    logo: Type.Optional(Nullable(HttpUrl)),
    logoDark: Type.Optional(Nullable(HttpUrl)),
    redirectTo: Type.Optional(Nullable(HttpUrl)),
    favicon: Type.Optional(Nullable(HttpUrl)),
    defaultTheme: Type.Optional(StringEnum(['LIGHT', 'DARK', 'AUTO'] as const, { default: 'AUTO' })),
    version: Type.Optional(Nullable(Type.Number())),
    cards: Type.Array(CardBody, { maxItems: 50 }),
  },
  { additionalProperties: false },
);
export type StatusPageBody = Static<typeof StatusPageBody>;

const Service = Type.Object({
  id: Id,
  name: Type.String(),
  accountId: Id,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});
export const ServiceSchema = Service;

export const StatusPage = Type.Object({
  id: Id,
  accountId: Id,
  name: Type.String(),
  description: Nullable(Type.String()),
  url: Type.String(),
  customDomain: Nullable(Type.String()),
  themeColors: Nullable(ThemeColors),
  logo: Nullable(Type.String()),
  logoDark: Nullable(Type.String()),
  redirectTo: Nullable(Type.String()),
  favicon: Nullable(Type.String()),
  defaultTheme: StringEnum(['LIGHT', 'DARK', 'AUTO'] as const),
  version: Nullable(Type.Number()),
  cards: Type.Array(
    Type.Object({
      id: Id,
      name: Type.String(),
      services: Type.Array(Service),
      created_at: Type.String({ format: 'date-time' }),
      updated_at: Nullable(Type.String({ format: 'date-time' })),
    }),
  ),
  whiteLabel: Type.Boolean(),
  isPrivate: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

/** A cursor page: the anchor's `{ length, entries, nextId }`. */
export const CursorPage = <T extends TSchema>(item: T) => Type.Object({ length: Type.Integer(), entries: Type.Array(item), nextId: Nullable(Type.String()) });
export const CursorQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    nextId: Type.Optional(Type.String({ format: 'uuid', description: 'Where the page starts: the nextId of the page before' })),
  },
  { additionalProperties: false },
);

export const ServiceBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });

const UpdateFields = {
  description: Type.String({ minLength: 1, maxLength: 5000 }),
  status: Type.Optional(StringEnum(PROGRESS)),
  publicIncidentUpdateDate: Type.Optional(Type.String({ format: 'date-time' })),
  notifySubscribers: Type.Optional(Type.Boolean()),
  // Read-only in the anchor's own form of an update: accepted and ignored.
  id: Type.Optional(Type.String()),
  created_at: Type.Optional(Type.String()),
};
export const IncidentUpdateBody = Type.Object(UpdateFields, { additionalProperties: false });
export type IncidentUpdateBody = Static<typeof IncidentUpdateBody>;

const ServiceOfIncident = Type.Object({ id: Id }, { additionalProperties: true });
const IncidentFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  severity: StringEnum(SEVERITIES),
  services: Type.Array(ServiceOfIncident, { minItems: 1, maxItems: 100 }),
  // Read-only in the anchor's form: accepted and ignored.
  id: Type.Optional(Type.String()),
  created_at: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.String()),
  lastUpdateStatus: Type.Optional(StringEnum(PROGRESS)),
  duration: Type.Optional(Nullable(Type.Integer())),
};
export const IncidentCreateBody = Type.Object(
  { ...IncidentFields, incidentUpdates: Type.Array(IncidentUpdateBody, { minItems: 1, maxItems: 1 }) },
  { additionalProperties: false },
);
export const IncidentReplaceBody = Type.Object(IncidentFields, { additionalProperties: false });
/** PATCH (what the anchor CLI's `incidents update --severity` sends): any of name, severity, services. */
export const IncidentPatchBody = Type.Partial(IncidentReplaceBody, { additionalProperties: false });

export const IncidentUpdate = Type.Object({
  id: Id,
  description: Type.String(),
  status: StringEnum(PROGRESS),
  publicIncidentUpdateDate: Type.String({ format: 'date-time' }),
  notifySubscribers: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});
export const Incident = Type.Object({
  id: Id,
  name: Type.String(),
  severity: StringEnum(SEVERITIES),
  services: Type.Array(Service),
  incidentUpdates: Type.Array(IncidentUpdate),
  lastUpdateStatus: StringEnum(PROGRESS),
  duration: Nullable(Type.Integer({ description: 'Seconds from declared to resolved; null while open' })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const Subscription = Type.Object({
  id: Id,
  type: StringEnum(['EMAIL'] as const),
  address: Type.String(),
  status: StringEnum(['PENDING', 'VERIFIED'] as const),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export const BulkSubscriptions = Type.Object(
  {
    subscriptions: Type.Array(
      Type.Object({ type: StringEnum(['EMAIL'] as const), config: Type.String({ format: 'email', maxLength: 320 }) }, { additionalProperties: false }),
      { minItems: 1, maxItems: 100 },
    ),
    autoVerify: Type.Boolean({
      default: false,
      description: 'Subscribe them verified (an imported, already opted-in list); otherwise each gets a confirm mail',
    }),
  },
  { additionalProperties: false },
);

/** A calendar date or a full timestamp; windows usually need the time of day. */
const DateOrTime = Type.Union([Type.String({ format: 'date-time' }), Type.String({ format: 'date' })]);

const StatusPageVisibility = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    severity: Type.Optional(Nullable(StringEnum(['MINOR', 'MEDIUM', 'MAJOR', 'CRITICAL'] as const))),
    affectAllServices: Type.Optional(Type.Boolean()),
    showAffectedServices: Type.Optional(Type.Boolean()),
    suppressAutoIncidents: Type.Optional(Type.Boolean()),
    notifyOnStart: Type.Optional(Type.Boolean()),
    notifyOnEnd: Type.Optional(Type.Boolean()),
    reminderMinutesBefore: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 525600 }), { maxItems: 20 })),
    autoStart: Type.Optional(Type.Boolean()),
    autoEnd: Type.Optional(Type.Boolean()),
    statusPageIds: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 100 })),
    serviceIds: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 1000 })),
  },
  { additionalProperties: false },
);

const Tag = Type.String({ minLength: 1, maxLength: 255 });

export const WindowBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    tags: Type.Array(Tag, { maxItems: 100, default: [] }),
    startsAt: DateOrTime,
    endsAt: DateOrTime,
    repeatInterval: Nullable(Type.Integer({ minimum: 1, maximum: 10000 }), { default: null }),
    repeatUnit: Nullable(StringEnum(['DAY', 'WEEK', 'MONTH'] as const), { default: null }),
    repeatEndsAt: Nullable(DateOrTime, { default: null }),
    description: Nullable(Type.String({ maxLength: 2000 }), { default: null }),
    statusPageVisibility: Type.Optional(StatusPageVisibility),
    pauseAllChecks: Type.Boolean({ default: false }),
    silenceAlertsTags: Type.Array(Tag, { maxItems: 100, default: [] }),
    silenceAllAlerts: Type.Boolean({ default: false }),
    timezone: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 64,
          pattern: '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$',
          title: 'a named IANA time zone',
          description:
            'Named IANA time zone of the repeat schedule (not a UTC offset). On create, left out or null means UTC; on update, left out keeps the stored zone and null resets it to UTC.',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type WindowBody = Static<typeof WindowBody>;

export const MaintenanceWindow = Type.Object({
  id: Type.Integer(),
  ...WindowBody.properties,
  timezone: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});
