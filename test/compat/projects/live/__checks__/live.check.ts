import { ApiCheck, AssertionBuilder } from 'checkly/constructs'

const target = process.env.LIVE_URL ?? 'http://127.0.0.1:9'

new ApiCheck('live-ok', {
  name: 'Live OK',
  request: { method: 'GET', url: `${target}/ok`, assertions: [AssertionBuilder.statusCode().equals(200)] },
})

new ApiCheck('live-failing', {
  name: 'Live failing',
  testOnly: true,
  request: { method: 'GET', url: `${target}/status/503`, assertions: [AssertionBuilder.statusCode().equals(200)] },
})
