import type { TSchema } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import type { Rules } from '../../http/rules.js';
import type { ChannelType } from '../../model/alerts.js';
import type { Config } from '../../platform/config.js';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { openSecret, sealSecret } from '../../storage/secret-box.js';
import type { AlertMessage } from '../message.js';
import { closeEmailTransports, EmailConfig, sendEmail } from './email.js';
import { OpsgenieConfig, opsgenieKey, sendOpsgenie } from './opsgenie.js';
import { PagerdutyConfig, pagerdutyKey, sendPagerduty } from './pagerduty.js';
import { checkSlackConfig, SlackConfig, sendSlack } from './slack.js';
import { SmsConfig, sendSms } from './sms.js';
import { checkWebhookConfig, keepStoredWebhookSecrets, maskWebhookConfig, sendWebhook, WebhookConfig, webhookSecrets } from './webhook.js';

/** What a sender is given besides the channel's config and the message. */
export interface SendContext {
  settings: Config['alerts'];
  /** Webhook channels' HMAC key. */
  signingSecret: string | null;
  /** Connections for account-chosen URLs: the outbound policy's (platform/outbound.ts). */
  dispatcher?: Dispatcher;
}

/** One kind of alert channel: the `config` it stores (checked at create and update) and how it sends. */
export interface ChannelKind<C> {
  config: TSchema;
  /** Resolves with what the far end said; rejects with why the attempt failed. */
  send(config: C, message: AlertMessage, ctx: SendContext): Promise<string>;
  /** Problems a valid-looking config has that would make every delivery fail (400 at create and update). */
  check?(config: C, rules: Rules, at: string, outbound: OutboundPolicy): void;
  /** The config as read back: write-only values empty (`revealHeaders`: a key that may write sees header values). */
  mask?(config: C, revealHeaders: boolean): C;
  /** An update that sends masked values back keeps the stored ones. */
  keepStored?(incoming: C, stored: C | undefined): C;
  /** Its secret values through `f`: sealed to be stored, opened to be sent (docs/platform.md, "Secrets at rest"). */
  secrets?(config: C, f: (value: string) => string): C;
  /** It keeps an open incident per check until a recovery closes it: a test message is closed right after it is sent. */
  opensIncidents?: boolean;
}

/**
 * The registry of channel kinds: a kind in CHANNEL_TYPES without an entry here does not compile, and the
 * channel routes, the delivery worker and the OpenAPI description all read it.
 */
export const CHANNEL_KINDS = {
  EMAIL: {
    config: EmailConfig,
    send: (config: EmailConfig, message, { settings }) => sendEmail(config, message, { url: settings.smtpUrl, from: settings.emailFrom }),
  },
  WEBHOOK: {
    config: WebhookConfig,
    check: checkWebhookConfig,
    mask: maskWebhookConfig,
    keepStored: keepStoredWebhookSecrets,
    secrets: webhookSecrets,
    send: (config: WebhookConfig, message, { settings, signingSecret, dispatcher }) =>
      sendWebhook(config, signingSecret, message, settings.deliveryTimeoutMs, dispatcher),
  },
  SLACK: {
    config: SlackConfig,
    check: checkSlackConfig,
    send: (config: SlackConfig, message, { settings, dispatcher }) => sendSlack(config, message, settings.deliveryTimeoutMs, dispatcher),
  },
  SMS: {
    config: SmsConfig,
    send: (config: SmsConfig, message, { settings }) =>
      sendSms(config, message, { url: settings.smsUrl, token: settings.smsToken }, settings.deliveryTimeoutMs),
  },
  PAGERDUTY: {
    config: PagerdutyConfig,
    opensIncidents: true,
    ...pagerdutyKey,
    send: (config: PagerdutyConfig, message, { settings, dispatcher }) =>
      sendPagerduty(config, message, settings.pagerdutyEventsUrl, settings.deliveryTimeoutMs, dispatcher),
  },
  OPSGENIE: {
    config: OpsgenieConfig,
    opensIncidents: true,
    ...opsgenieKey,
    send: (config: OpsgenieConfig, message, { settings, dispatcher }) =>
      sendOpsgenie(config, message, settings.opsgenieApiUrl, settings.deliveryTimeoutMs, dispatcher),
  },
  // biome-ignore lint/suspicious/noExplicitAny: each kind narrows its own config type
} satisfies Record<ChannelType, ChannelKind<any>>;

/** Sends `message` through a stored channel of kind `type` (its stored secrets opened here, for the send only). */
export function sendThrough(type: ChannelType, config: unknown, message: AlertMessage, ctx: SendContext): Promise<string> {
  const kind = CHANNEL_KINDS[type] as unknown as ChannelKind<unknown> | undefined;
  if (!kind) return Promise.reject(new Error(`No sender for ${type} channels`));
  try {
    return kind.send(openChannelConfig(type, config), message, { ...ctx, signingSecret: openSecret(ctx.signingSecret) });
  } catch (err) {
    return Promise.reject(err);
  }
}

/** A config as stored: its secret values sealed (a value sealed already, kept from storage, stays as it is). */
export function sealChannelConfig<C>(type: ChannelType, config: C): C {
  const secrets = kindOf(type).secrets;
  return secrets ? (secrets(config, (v) => sealSecret(v)) as C) : config;
}

/** A config with its secret values passed through `f`. */
export function mapChannelSecrets<C>(type: ChannelType, config: C, f: (value: string) => string): C {
  const secrets = kindOf(type).secrets;
  return secrets ? (secrets(config, f) as C) : config;
}

/** A stored config with its secret values opened. */
export function openChannelConfig<C>(type: ChannelType, config: C): C {
  const secrets = kindOf(type).secrets;
  return secrets ? (secrets(config, (v) => openSecret(v)) as C) : config;
}

/** Whether a channel kind keeps incidents open until a recovery (PagerDuty, Opsgenie). */
export const opensIncidents = (type: ChannelType): boolean => Boolean((CHANNEL_KINDS[type] as ChannelKind<unknown>).opensIncidents);

/** Releases what senders keep open between deliveries (SMTP pools). */
export function closeSenders(): void {
  closeEmailTransports();
}

const kindOf = (type: ChannelType) => CHANNEL_KINDS[type] as unknown as ChannelKind<unknown>;

/** The 400s of a channel config (see ChannelKind.check). */
export function checkChannelConfig(type: ChannelType, config: unknown, rules: Rules, at: string, outbound: OutboundPolicy): void {
  kindOf(type).check?.(config, rules, at, outbound);
}

/** A stored config as a caller may read it. */
export function maskChannelConfig<C>(type: ChannelType, config: C, revealHeaders: boolean): C {
  const mask = kindOf(type).mask;
  return mask ? (mask(config, revealHeaders) as C) : config;
}

/** An incoming config with the stored write-only values it sent back masked. */
export function keepStoredChannelConfig<C>(type: ChannelType, incoming: C, stored: C | undefined): C {
  const keep = kindOf(type).keepStored;
  return keep ? (keep(incoming, stored) as C) : incoming;
}
