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

/**
 * What can be done to a listed element, in the order offered.
 *
 * Extension point for click and type by index (issue 29, item 4): add
 * `{id: 'click', label: 'Click', form: ...}` posting `targetFields(target)` to
 * /experimental/operator/click-by-index, and `{id: 'type', label: 'Type text', form: ...}`
 * posting `{...targetFields(target), text}` to /experimental/operator/type-by-index. Both answer
 * `{success, message}` like a press, so the view shows their answer, latency and errors as is.
 */
export const operatorActions: readonly OperatorAction[] = [
  { id: 'press', label: 'Press a key', form: PressKeyForm },
];
