import type { FunctionComponent } from 'preact';
import { Check } from './Check';
import { Home } from './Home';
import { Alerts, Dashboards, Maintenance, PrivateLocations, StatusPages } from './Manage';
import { AcceptInvitation, ResetPassword } from './Public';
import { Reports } from './Reports';
import { Run } from './Run';
import { CheckSessionScreen, TestSession, TestSessionResultScreen } from './Sessions';
import { Account, Audit, Keys, Members, Profile } from './Settings';
import { SignIn } from './SignIn';

/** Every screen: the path it answers (the CLI's links included) and, for the main ones, their place in the navigation. */
export interface ScreenDef {
  path: string;
  component: FunctionComponent<{ params: Record<string, string> }>;
  nav?: { label: string; href: string };
  /** Reached without signing in (pages a mail links to). */
  public?: boolean;
}

export const SCREENS: ScreenDef[] = [
  { path: '/sign-in', component: SignIn, public: true },
  { path: '/invitations/accept', component: AcceptInvitation, public: true },
  { path: '/reset-password', component: ResetPassword, public: true },
  { path: '/', component: Home, nav: { label: 'Checks', href: '/' } },
  { path: '/checks/:id', component: Check },
  { path: '/checks/:checkId/results/:resultId', component: Run },
  { path: '/reports', component: Reports, nav: { label: 'Reports', href: '/reports' } },
  { path: '/alerts', component: Alerts, nav: { label: 'Alerts', href: '/alerts' } },
  { path: '/maintenance', component: Maintenance, nav: { label: 'Maintenance', href: '/maintenance' } },
  { path: '/status-pages', component: StatusPages, nav: { label: 'Status pages', href: '/status-pages' } },
  { path: '/dashboards', component: Dashboards, nav: { label: 'Dashboards', href: '/dashboards' } },
  { path: '/private-locations', component: PrivateLocations, nav: { label: 'Private locations', href: '/private-locations' } },
  { path: '/test-sessions/:id', component: TestSession },
  { path: '/test-sessions/:id/results/:resultId', component: TestSessionResultScreen },
  // The anchor CLI's links: `Open session: …/accounts/{id}/test-sessions/{id}`, `View result: …/v1/test-sessions/{id}/results/{id}`.
  { path: '/accounts/:accountId/test-sessions/:id', component: TestSession },
  { path: '/v1/test-sessions/:id', component: TestSession },
  { path: '/v1/test-sessions/:id/results/:resultId', component: TestSessionResultScreen },
  { path: '/v1/check-sessions/:id', component: CheckSessionScreen },
  { path: '/v2/check-sessions/:id', component: CheckSessionScreen },
  { path: '/settings/profile', component: Profile, nav: { label: 'Settings', href: '/settings' } },
  { path: '/settings', component: Profile },
  { path: '/settings/keys', component: Keys },
  { path: '/settings/members', component: Members },
  { path: '/settings/audit', component: Audit },
  { path: '/settings/account', component: Account },
];
