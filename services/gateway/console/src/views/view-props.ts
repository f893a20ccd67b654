import type { Route } from '../route.js';
import type { Session } from '../session.js';

/**
 * What the console hands every view: a module of its own, so the views and their list (views.ts)
 * do not import each other.
 */
export interface ViewProps {
  session: Session;
  route: Route;
  /** Go to a hash (hashFor); the same hash again re-runs the view's request. */
  go: (hash: string) => void;
}
