import type { Interactability } from '../../desktop';

/**
 * AT-SPI role names of controls that take keyboard input by design. Other focusable elements
 * (documents, panels, groups, tables ...) only sometimes do something with a key.
 */
const DEFINITE_ROLES = new Set([
  'push button',
  'toggle button',
  'button',
  'entry',
  'text',
  'password text',
  'editbar',
  'check box',
  'check menu item',
  'radio button',
  'radio menu item',
  'combo box',
  'link',
  'menu item',
  'menu',
  'slider',
  'spin button',
  'list item',
  'tree item',
  'page tab',
  'table cell',
  'scroll bar',
  'switch',
]);

export function interactabilityOf(roleName: string, focusable: boolean): Interactability {
  if (!focusable) return 'none';
  return DEFINITE_ROLES.has(roleName.toLowerCase()) ? 'definite' : 'sometimes';
}

/**
 * Roles where a click at the centre only puts the caret in (text fields, terminals): safe as a
 * focus fallback. A click on anything else may activate it (a button submits, a check box
 * toggles, a combo box opens), so it is never clicked to focus.
 */
const CLICK_FOCUSES_ROLES = new Set([
  'entry',
  'text',
  'password text',
  'terminal',
  'document text',
  'editbar',
]);

export function clickOnlyFocuses(roleName: string): boolean {
  return CLICK_FOCUSES_ROLES.has(roleName.toLowerCase());
}
