import type { FunctionComponent } from 'preact';
import { EditCheckScreen, NewCheck } from '../check-form/CheckForm';
import { channelScreens } from './Alerts';
import { Check } from './Check';
import { dashboardScreens } from './Dashboards';
import { groupScreens } from './Groups';
import { Home } from './Home';
import { maintenanceScreens } from './Maintenance';
import { PrivateLocations } from './PrivateLocations';
import { AcceptInvitation, ResetPassword } from './Public';
import { Reports } from './Reports';
import { Run } from './Run';
import { CheckSessionScreen, TestSession, TestSessionResultScreen } from './Sessions';
import { Account, Audit, Keys, Members, Profile } from './Settings';
import { SignIn } from './SignIn';
import { NewIncident, statusPageScreens } from './StatusPages';
import { variableScreens } from './Variables';

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
  { path: '/checks/new', component: NewCheck },
  { path: '/checks/:id/edit', component: EditCheckScreen },
  { path: '/checks/:id', component: Check },
  { path: '/checks/:checkId/results/:resultId', component: Run },
  { path: '/groups', component: groupScreens.List, nav: { label: 'Groups', href: '/groups' } },
  { path: '/groups/:id', component: groupScreens.Edit },
  { path: '/reports', component: Reports, nav: { label: 'Reports', href: '/reports' } },
  { path: '/alerts', component: channelScreens.List, nav: { label: 'Alerts', href: '/alerts' } },
  { path: '/alerts/:id', component: channelScreens.Edit },
  { path: '/maintenance', component: maintenanceScreens.List, nav: { label: 'Maintenance', href: '/maintenance' } },
  { path: '/maintenance/:id', component: maintenanceScreens.Edit },
  { path: '/status-pages/incidents/new', component: NewIncident },
  { path: '/status-pages', component: statusPageScreens.List, nav: { label: 'Status pages', href: '/status-pages' } },
  { path: '/status-pages/:id', component: statusPageScreens.Edit },
  { path: '/dashboards', component: dashboardScreens.List, nav: { label: 'Dashboards', href: '/dashboards' } },
  { path: '/edit/dashboards/:id', component: dashboardScreens.Edit },
  { path: '/variables', component: variableScreens.List, nav: { label: 'Variables', href: '/variables' } },
  { path: '/variables/:id', component: variableScreens.Edit },
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
