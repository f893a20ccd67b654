import type { ListedElement } from '@screenfleet/contracts';
import { h, type VNode } from '../vendor/preact.js';
import { useState } from '../vendor/hooks.js';
import {
  comboText,
  modifierLabels,
  modifierNames,
  namedKeySuggestions,
  type ModifierName,
} from '../operator-keys.js';

/** The element an action is for: its listing and device, as the listing was asked. */
export interface ActionTarget {
  element: ListedElement;
  cacheId: string;
  /** As the listing named it; absent: the gateway's default (the only agent online). */
  deviceName?: string;
}

export interface ActionFormProps {
  target: ActionTarget;
  busy: boolean;
  /** Sends the action; the view shows the answer, its latency, or the API's error. */
  send: (path: string, body: Record<string, unknown>, what: string) => void;
}

export interface OperatorAction {
  id: string;
  label: string;
  form: (props: ActionFormProps) => VNode;
}

/** The body fields every action on a listed element carries. */
export const targetFields = ({ element, cacheId, deviceName }: ActionTarget) => ({
  element_index: element.index,
  cache_id: cacheId,
  ...(deviceName ? { device_name: deviceName } : {}),
});

function PressKeyForm({ target, busy, send }: ActionFormProps) {
  const [key, setKey] = useState('');
  const [modifiers, setModifiers] = useState<ModifierName[]>([]);
  const toggle = (name: ModifierName, on: boolean) =>
    setModifiers(modifierNames.filter((m) => (m === name ? on : modifiers.includes(m))));
  return (
    <form
      class="press-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (busy) return;
        const name = key.trim();
        send(
          '/experimental/operator/press-key-by-index',
          { ...targetFields(target), key: name, modifiers },
          comboText(name, modifiers),
        );
      }}
    >
      <div class="field">
        <label for="press-key">Key</label>
        <input
          id="press-key"
          required
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
          list="press-key-names"
          autocomplete="off"
          aria-describedby="press-key-hint"
        />
        <datalist id="press-key-names">
          {namedKeySuggestions.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        <span id="press-key-hint" class="hint">
          A letter, a digit, F1–F24, or a named key (enter, tab, escape, …)
        </span>
      </div>
      <fieldset class="modifiers">
        <legend>Held with</legend>
        {modifierNames.map((name) => (
          <span class="check" key={name}>
            <input
              id={`press-${name}`}
              type="checkbox"
              checked={modifiers.includes(name)}
              onChange={(event) => toggle(name, event.currentTarget.checked)}
            />
            <label for={`press-${name}`}>{modifierLabels[name]}</label>
          </span>
        ))}
      </fieldset>
      <button type="submit" aria-disabled={busy}>
        Press key
      </button>
    </form>
  );
}

/** Click: the element's centre, as the agent finds it; nothing to fill in. */
function ClickForm({ target, busy, send }: ActionFormProps) {
  return (
    <form
      class="press-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (busy) return;
        send('/experimental/operator/click-by-index', targetFields(target), 'click');
      }}
    >
      <p class="hint">Clicks the middle of element {target.element.index}.</p>
      <button type="submit" aria-disabled={busy}>
        Click element
      </button>
    </form>
  );
}

/**
 * Type text at the element's caret. A textarea, since a line break (Enter) and a tab are keys
 * the agent types too; its other rules (length, no control characters) are the API's to name.
 */
function TypeTextForm({ target, busy, send }: ActionFormProps) {
  const [text, setText] = useState('');
  return (
    <form
      class="press-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (busy) return;
        send(
          '/experimental/operator/type-by-index',
          { ...targetFields(target), text },
          `type ${text.length} ${text.length === 1 ? 'character' : 'characters'}`,
        );
      }}
    >
      <div class="field">
        <label for="type-text">Text</label>
        <textarea
          id="type-text"
          required
          rows={2}
          value={text}
          onInput={(event) => setText(event.currentTarget.value)}
          aria-describedby="type-text-hint"
        />
        <span id="type-text-hint" class="hint">
          Typed where the element's caret is; a line break presses Enter.
        </span>
      </div>
      <button type="submit" aria-disabled={busy}>
        Type text
      </button>
    </form>
  );
}

/**
 * What can be done to a listed element, in the order offered. Each answers `{success, message}`,
 * so the view shows every answer, its latency and errors (409: the listing is stale) alike.
 */
export const operatorActions: readonly OperatorAction[] = [
  { id: 'press', label: 'Press a key', form: PressKeyForm },
  { id: 'click', label: 'Click', form: ClickForm },
  { id: 'type', label: 'Type text', form: TypeTextForm },
];
