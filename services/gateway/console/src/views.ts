import type { VNode } from './vendor/preact.js';
import { fleetScope } from './fleet.js';
import type { Scope } from './session.js';
import { ArchiveView } from './views/archive.view.js';
import { AuditView } from './views/audit.view.js';
import { DeviceView } from './views/device.view.js';
import { FleetView } from './views/fleet.view.js';
import { OperatorView } from './views/operator.view.js';
import { SearchView } from './views/search.view.js';
import { TokensView } from './views/tokens.view.js';
import type { ViewProps } from './views/view-props.js';

export interface ConsoleView {
  /** The hash's first part: `#/<id>`. */
  id: string;
  title: string;
  /** Offered only to a token with this scope (GET /auth/whoami). */
  scope: Scope;
  /** Listed in the navigation; false for views reached from another (a device's page). */
  nav: boolean;
  component: (props: ViewProps) => VNode | null;
}

/**
 * The console's views in navigation order; the first the token may use opens by default. The
 * Device view (`#/devices/<name>`) is reached from a Fleet row, not from the navigation.
 */
export const consoleViews: readonly ConsoleView[] = [
  { id: 'fleet', title: 'Fleet', scope: fleetScope, nav: true, component: FleetView },
  { id: 'devices', title: 'Device', scope: fleetScope, nav: false, component: DeviceView },
  { id: 'search', title: 'Search', scope: 'search', nav: true, component: SearchView },
  { id: 'archive', title: 'Archive', scope: 'archive:read', nav: true, component: ArchiveView },
  { id: 'operator', title: 'Operator', scope: 'operator', nav: true, component: OperatorView },
  { id: 'tokens', title: 'Tokens', scope: 'tokens:admin', nav: true, component: TokensView },
  { id: 'audit', title: 'Audit', scope: 'audit:read', nav: true, component: AuditView },
];
