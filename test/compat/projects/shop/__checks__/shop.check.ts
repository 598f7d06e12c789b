import {
  ApiCheck,
  AssertionBuilder,
  BrowserCheck,
  CheckGroupV2,
  EmailAlertChannel,
  Frequency,
  HeartbeatMonitor,
  MaintenanceWindow,
  TcpMonitor,
  WebhookAlertChannel,
} from 'checkly/constructs'

const target = process.env.SHOP_URL ?? 'http://127.0.0.1:9'
const port = Number(new URL(target).port || 80)

export const opsHook = new WebhookAlertChannel('ops-webhook', {
  name: 'Ops webhook',
  method: 'POST',
  url: new URL(`${target}/hook`),
  template: '{"check":"{{CHECK_NAME}}","type":"{{ALERT_TYPE}}"}',
  sendRecovery: true,
  sendFailure: true,
})

export const oncall = new EmailAlertChannel('oncall-email', { address: 'oncall@shop.example.test' })

export const shopGroup = new CheckGroupV2('shop-group', {
  name: 'Shop',
  activated: true,
  locations: ['eu-west-1'],
  alertChannels: [opsHook],
})

new ApiCheck('shop-health', {
  name: process.env.SHOP_HEALTH_NAME ?? 'Shop health',
  group: shopGroup,
  alertChannels: [opsHook, oncall],
  degradedResponseTime: 2000,
  maxResponseTime: 5000,
  request: {
    method: 'GET',
    url: `${target}/health`,
    assertions: [AssertionBuilder.statusCode().equals(200), AssertionBuilder.jsonBody('$.status').equals('ok')],
  },
})

if (!process.env.SHOP_WITHOUT_TCP) {
  new TcpMonitor('shop-tcp', {
    name: 'Shop port',
    frequency: Frequency.EVERY_5M,
    request: { hostname: '127.0.0.1', port },
  })
}

new HeartbeatMonitor('nightly-backup', {
  name: 'Nightly backup',
  period: 1,
  periodUnit: 'days',
  grace: 2,
  graceUnit: 'hours',
  alertChannels: [oncall],
})

new BrowserCheck('shop-home', {
  name: 'Shop home page',
  frequency: Frequency.EVERY_30M,
  code: { entrypoint: './home.spec.ts' },
})

new MaintenanceWindow('release-window', {
  name: 'Weekly release',
  tags: ['shop'],
  startsAt: new Date('2026-01-05T22:00:00.000Z'),
  endsAt: new Date('2026-01-05T23:00:00.000Z'),
  repeatInterval: 1,
  repeatUnit: 'WEEK',
})
