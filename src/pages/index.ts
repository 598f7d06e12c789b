/** The kit of the server-rendered pages (dashboards, status pages, the API reference): one policy, one way to send, templates, page routes, the response-time chart, the build cache. What other folders may use: everything else here is this folder's own. */
export { TtlCache } from './cache.js';
export { type ChartOptions, responseTimeChart } from './chart.js';
export { definePage, mountPages, PAGE_CSP, type PageRoute, pageTemplates, sendPage, servePages } from './page.js';
