/**
 * AT-SPI names and numbers (at-spi2-core's xml/ and atspi-constants.h), and how to read a state
 * set.
 */

export const A11Y_BUS = { name: 'org.a11y.Bus', path: '/org/a11y/bus', iface: 'org.a11y.Bus' };
/** The root object's path, on the registry and on every application alike. */
export const ROOT_PATH = '/org/a11y/atspi/accessible/root';
/** The object path AT-SPI answers for "no object". */
export const NULL_PATH = '/org/a11y/atspi/null';
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

export const IFACE = {
  accessible: 'org.a11y.atspi.Accessible',
  application: 'org.a11y.atspi.Application',
  cache: 'org.a11y.atspi.Cache',
  component: 'org.a11y.atspi.Component',
  eventObject: 'org.a11y.atspi.Event.Object',
  registry: 'org.a11y.atspi.Registry',
  text: 'org.a11y.atspi.Text',
  properties: 'org.freedesktop.DBus.Properties',
} as const;

/** AtspiStateType bit numbers the adapter tests; all fall in the first of the two state words. */
export const STATE = {
  defunct: 6,
  editable: 7,
  focusable: 11,
  focused: 12,
  showing: 25,
  singleLine: 26,
  visible: 30,
  managesDescendants: 31,
} as const;

/** Whether a state set (the two words AT-SPI sends) has the AtspiStateType `bit`. */
export function hasState(states: readonly [number, number], bit: number): boolean {
  const word = bit < 32 ? states[0] : states[1];
  return ((word >>> (bit % 32)) & 1) === 1;
}

/** Every AtspiStateType by the name StateChanged events give it, as its bit number. */
export const STATE_NAMES: Readonly<Record<string, number>> = Object.fromEntries(
  [
    'invalid',
    'active',
    'armed',
    'busy',
    'checked',
    'collapsed',
    'defunct',
    'editable',
    'enabled',
    'expandable',
    'expanded',
    'focusable',
    'focused',
    'has-tooltip',
    'horizontal',
    'iconified',
    'modal',
    'multi-line',
    'multiselectable',
    'opaque',
    'pressed',
    'resizable',
    'selectable',
    'selected',
    'sensitive',
    'showing',
    'single-line',
    'stale',
    'transient',
    'vertical',
    'visible',
    'manages-descendants',
    'indeterminate',
    'required',
    'truncated',
    'animated',
    'invalid-entry',
    'supports-autocompletion',
    'selectable-text',
    'is-default',
    'visited',
    'checkable',
    'has-popup',
    'read-only',
  ].map((name, bit) => [name, bit]),
);

/** AtspiCoordType: screen coordinates. */
export const COORD_TYPE_SCREEN = 0;

/** AtspiRole numbers the adapter needs by number (everything else goes by role name). */
export const ROLE = { invalid: 0, application: 75, documentWeb: 95 } as const;

/** DBusError types meaning "this object or its application is gone". */
export const GONE_ERRORS = new Set([
  'org.freedesktop.DBus.Error.UnknownObject',
  'org.freedesktop.DBus.Error.ServiceUnknown',
  'org.freedesktop.DBus.Error.NameHasNoOwner',
]);
