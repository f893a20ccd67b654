/** AT-SPI names and numbers (at-spi2-core's xml/ and atspi-constants.h). */

export const A11Y_BUS = { name: 'org.a11y.Bus', path: '/org/a11y/bus', iface: 'org.a11y.Bus' };
/** The root object's path, on the registry and on every application alike. */
export const ROOT_PATH = '/org/a11y/atspi/accessible/root';
export const REGISTRY = {
  name: 'org.a11y.atspi.Registry',
  path: '/org/a11y/atspi/registry',
  rootPath: ROOT_PATH,
};
export const CACHE_PATH = '/org/a11y/atspi/cache';
/** The bus itself (AddMatch: which signals it routes to us). */
export const DBUS_DRIVER = {
  destination: 'org.freedesktop.DBus',
  path: '/org/freedesktop/DBus',
  interface: 'org.freedesktop.DBus',
};

/**
 * The events a listing watches (tree-cache.ts): an application sends only those some client
 * registered for. children-changed also makes Chromium answer Cache.GetItems at all.
 */
export const WATCHED_EVENTS = [
  'object:children-changed',
  'object:state-changed',
  'object:property-change',
  'object:bounds-changed',
  'object:visible-data-changed',
];

export const IFACE = {
  accessible: 'org.a11y.atspi.Accessible',
  application: 'org.a11y.atspi.Application',
  cache: 'org.a11y.atspi.Cache',
  component: 'org.a11y.atspi.Component',
  eventObject: 'org.a11y.atspi.Event.Object',
  registry: 'org.a11y.atspi.Registry',
  properties: 'org.freedesktop.DBus.Properties',
} as const;

/** AtspiStateType bit numbers; all fall in the first of the two state words. */
export const STATE = {
  focusable: 11,
  focused: 12,
  showing: 25,
  visible: 30,
  managesDescendants: 31,
} as const;

/** AtspiCoordType: screen coordinates. */
export const COORD_TYPE_SCREEN = 0;

/** AtspiRole numbers the adapter needs by number (everything else goes by role name). */
export const ROLE = { invalid: 0, application: 75 } as const;

/** DBusError types meaning "this object or its application is gone". */
export const GONE_ERRORS = new Set([
  'org.freedesktop.DBus.Error.UnknownObject',
  'org.freedesktop.DBus.Error.ServiceUnknown',
  'org.freedesktop.DBus.Error.NameHasNoOwner',
]);
