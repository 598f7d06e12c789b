import type { RUNTIME_IDS } from '../../model/checks.js';

type RuntimeId = (typeof RUNTIME_IDS)[number];

export interface Runtime {
  name: RuntimeId;
  multiStepSupport: boolean;
  nodeJsVersion: string;
  stage: 'ALPHA' | 'BETA' | 'CURRENT' | 'DEPRECATED' | 'REMOVED' | 'STABLE';
  runtimeEndOfLife?: string;
  description: string;
  /** Package name → version, as in a package.json; `node` is the Node.js version. */
  dependencies: Record<string, string>;
}

const deps = (node: string, playwright: string, extra: Record<string, string> = {}) => ({
  node,
  '@playwright/test': playwright,
  playwright,
  axios: '1.7.7',
  chai: '4.3.10',
  'date-fns': '2.30.0',
  'form-data': '4.0.0',
  jsonwebtoken: '9.0.2',
  lodash: '4.17.21',
  moment: '2.30.1',
  otpauth: '9.2.2',
  uuid: '9.0.1',
  ...extra,
});

/**
 * The runtimes a check's `runtimeId` may name: the contract's list, with what each one offers scripts.
 * Newest first; the account's default runtime applies to checks that name none.
 */
export const RUNTIMES: Record<RuntimeId, Runtime> = {
  '2026.04': {
    name: '2026.04',
    multiStepSupport: true,
    nodeJsVersion: 'v22.14.0',
    stage: 'CURRENT',
    description: 'Main updates are Node.js 22 and Playwright 1.58.2',
    dependencies: deps('22.14.0', '1.58.2', { zod: '3.24.2' }),
  },
  '2025.04': {
    name: '2025.04',
    multiStepSupport: true,
    nodeJsVersion: 'v22.11.0',
    stage: 'STABLE',
    description: 'Main updates are Node.js 22 and Playwright 1.51.1',
    dependencies: deps('22.11.0', '1.51.1'),
  },
  '2024.09': {
    name: '2024.09',
    multiStepSupport: true,
    nodeJsVersion: 'v18.20.4',
    stage: 'STABLE',
    description: 'Main updates are Playwright 1.46.0',
    dependencies: deps('18.20.4', '1.46.0'),
  },
  '2024.02': {
    name: '2024.02',
    multiStepSupport: true,
    nodeJsVersion: 'v18.19.0',
    stage: 'DEPRECATED',
    runtimeEndOfLife: '12/31/2026',
    description: 'Main updates are Playwright 1.41.2',
    dependencies: deps('18.19.0', '1.41.2'),
  },
  '2023.09': {
    name: '2023.09',
    multiStepSupport: true,
    nodeJsVersion: 'v18.17.1',
    stage: 'DEPRECATED',
    runtimeEndOfLife: '12/31/2026',
    description: 'Main updates are Node.js 18 and Playwright 1.37.1',
    dependencies: deps('18.17.1', '1.37.1'),
  },
  '2023.02': {
    name: '2023.02',
    multiStepSupport: true,
    nodeJsVersion: 'v16.19.0',
    stage: 'DEPRECATED',
    runtimeEndOfLife: '06/30/2026',
    description: 'Main updates are multi-step checks and Playwright 1.30.0',
    dependencies: deps('16.19.0', '1.30.0'),
  },
  '2022.10': {
    name: '2022.10',
    multiStepSupport: false,
    nodeJsVersion: 'v16.17.0',
    stage: 'DEPRECATED',
    runtimeEndOfLife: '06/30/2026',
    description: 'Main updates are Node.js 16 and Playwright 1.27.1',
    dependencies: deps('16.17.0', '1.27.1'),
  },
};
