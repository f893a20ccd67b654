/**
 * The test page's HTML: the small form the desktop tests press keys on (three inputs and a
 * button) and, for tests and the benchmark at real-app scale, a generated catalogue of labelled
 * elements below it. One generator for every test that serves the page, so the elements a test
 * looks for are the same everywhere. Pure (no I/O).
 */

export const PAGE_TITLE = 'Operator test page';

/** Ids of the form's inputs and button, in document order. */
export const PAGE_FIELDS = [
  { id: 'first', label: 'First name' },
  { id: 'last', label: 'Last name' },
  { id: 'email', label: 'Email' },
] as const;
export const PAGE_BUTTON = { id: 'submit', label: 'Submit' } as const;

/** A keyboard-reachable element of the page as AT-SPI should list it. */
export interface PageElement {
  /** The DOM id (what the page's keydown report calls activeId). */
  id: string;
  /** Its accessible name: the label a user reads, the listing's `text`. */
  label: string;
  /** The AT-SPI role name Chromium gives it. */
  role: 'entry' | 'push button' | 'link' | 'list item';
}

export interface PageContent {
  html: string;
  /** Every element a key can be pressed on, in document order (the listing's order). */
  elements: readonly PageElement[];
}

/** The catalogue size the benchmark and the scale tests use: 504 elements in all. */
export const LARGE_PAGE = { sections: 25 } as const;

export interface PageOptions {
  /**
   * Catalogue sections below the form, 20 keyboard-reachable elements each (4 labelled inputs,
   * 3 buttons, 6 links in a nested list, 7 options of a list box), with headings and text that
   * are not. 0 (the default) serves the form alone.
   */
  sections?: number;
}

const WAREHOUSES = ['North', 'South', 'East', 'West', 'Central', 'Harbour', 'Airport'];
const FIELDS = ['Quantity', 'Price', 'Supplier', 'Notes'];
const ACTIONS = ['Save', 'Reset', 'Archive'];
const TOPICS = ['Overview', 'Stock', 'Orders', 'Returns', 'Reports', 'Settings'];
const STATES = ['pending', 'packed', 'shipped', 'delivered', 'returned', 'on hold', 'paid'];

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** One catalogue section: its HTML and its elements in document order. */
function catalogueSection(n: number): PageContent {
  const name = `${WAREHOUSES[n % WAREHOUSES.length] as string} warehouse ${n + 1}`;
  const elements: PageElement[] = [];
  const add = (element: PageElement): string => {
    elements.push(element);
    return `id="${element.id}"`;
  };
  const fields = FIELDS.map((field, i) => {
    const id = `s${n}-field${i}`;
    const label = `${field} ${n + 1}`;
    return `<span class="field"><label for="${id}">${label}</label><input ${add({ id, label, role: 'entry' })} type="text"></span>`;
  });
  const buttons = ACTIONS.map((action, i) => {
    const label = `${action} ${n + 1}`;
    return `<button ${add({ id: `s${n}-button${i}`, label, role: 'push button' })} type="button">${label}</button>`;
  });
  // Links inside a nested list (nav > ul > li > a), as a site's menu is built.
  const links = TOPICS.map((topic, i) => {
    const label = `${topic} of ${n + 1}`;
    return `<li><a ${add({ id: `s${n}-link${i}`, label, role: 'link' })} href="/warehouse/${n + 1}/${topic.toLowerCase()}">${label}</a></li>`;
  });
  const options = STATES.map((state, i) => {
    const label = `Order ${(n + 1) * 100 + i} ${state}`;
    return `<li role="option" aria-selected="false" tabindex="-1" ${add({ id: `s${n}-item${i}`, label, role: 'list item' })}>${escapeHtml(label)}</li>`;
  });
  const html = `<section aria-labelledby="s${n}-title">
<h2 id="s${n}-title">${name}</h2>
<p>Stock and orders of the ${name.toLowerCase()}; figures refresh every night.</p>
<div class="fields">${fields.join('')}</div>
<div class="buttons">${buttons.join('')}</div>
<nav aria-label="${name} pages"><ul>${links.join('')}</ul></nav>
<ul role="listbox" aria-label="Orders of ${name}">${options.join('')}</ul>
</section>`;
  return { html, elements };
}

// No <form>: Enter in an input must not navigate away (nor may a link: the page cancels link
// clicks). Reports go out with fetch to the same origin (keydowns and values in batches, below);
// commands come in over Server-Sent Events, so removeElement and renameElement are immediate.
const SCRIPT = `<script>
let seq = 0;
// Value reports have their own numbers: keydown reports are counted without gaps (tests wait
// for every report numbered before a marker key).
let valueSeq = 0;
function post(path, body) {
  return fetch(path, { method: 'POST', keepalive: true, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
// Keydown and value reports leave in batches: those made while keys queue up (a typed text)
// go in one request once the page's thread has handled them (input runs before timers), not a
// request per key and per value, which cost Chromium more than the keys themselves
// (bench:operator's typings). A later value of an input replaces one not sent yet.
let batch = [];
function report(kind, body) {
  if (batch.length === 0) setTimeout(() => {
    const reports = batch;
    batch = [];
    fetch('/reports', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(reports) });
  }, 0);
  if (kind === 'value') batch = batch.filter((r) => r.kind !== 'value' || r.body.id !== body.id);
  batch.push({ kind, body });
}
window.addEventListener('keydown', (e) => {
  const active = document.activeElement;
  report('keydown', { key: e.key, code: e.code, ctrlKey: e.ctrlKey, shiftKey: e.shiftKey,
    altKey: e.altKey, metaKey: e.metaKey, repeat: e.repeat,
    activeId: active && active.id ? active.id : '', at: performance.timeOrigin + performance.now(),
    seq: ++seq });
}, true);
document.addEventListener('click', (e) => {
  if (e.target instanceof Element && e.target.closest('a')) e.preventDefault();
  const target = e.target instanceof Element ? e.target.closest('[id]') : null;
  post('/click', { id: target ? target.id : '' });
}, true);
document.addEventListener('input', (e) => {
  // Numbered: each report travels on its own, a later one may arrive first.
  if (e.target instanceof HTMLInputElement) report('value', { id: e.target.id, value: e.target.value, seq: ++valueSeq });
}, true);
const commands = new EventSource('/commands');
// Removed elements (with their labels) by id, where they were: restore puts them back.
const removed = new Map();
commands.onmessage = (message) => {
  const command = JSON.parse(message.data);
  const element = document.getElementById(command.id);
  const label = document.querySelector('label[for="' + command.id + '"]');
  if (command.verb === 'remove' && element) {
    removed.set(command.id, { element, label, parent: element.parentNode, next: element.nextSibling });
    if (label) label.remove();
    element.remove();
  }
  if (command.verb === 'restore' && removed.has(command.id)) {
    const was = removed.get(command.id);
    removed.delete(command.id);
    if (was.label) was.parent.insertBefore(was.label, was.next);
    was.parent.insertBefore(was.element, was.next);
  }
  // A new element in its place: the same id, label and look, another node.
  if (command.verb === 'replace' && element) element.replaceWith(element.cloneNode(true));
  // A banner over the element, as a cookie notice or a dialog covers a page: a button, so a
  // listing shows it once the accessibility tree has it (tests wait for that).
  if (command.verb === 'cover' && element) {
    const box = element.getBoundingClientRect();
    const cover = document.createElement('button');
    cover.id = 'cover-' + command.id;
    cover.textContent = 'We use cookies';
    cover.style.cssText = 'position:fixed;background:#fed;left:' + (box.left - 4) + 'px;top:' +
      (box.top - 4) + 'px;width:' + (box.width + 8) + 'px;height:' + (box.height + 8) + 'px';
    document.body.appendChild(cover);
  }
  if (command.verb === 'maxlength' && element) element.maxLength = Number(command.value);
  if (command.verb === 'uncover') document.getElementById('cover-' + command.id)?.remove();
  if (command.verb === 'busy') {
    // Holds the page's thread, as a heavy page does: input and focus wait behind it.
    post('/ack', { done: command.verb + ' ' + command.id });
    const until = performance.now() + Number(command.ms);
    while (performance.now() < until) {}
    return;
  }
  if (command.verb === 'rename') {
    // An input's name is its label's text; anything else is named by its own text.
    if (label) label.textContent = command.label;
    else if (element) element.textContent = command.label;
  }
  post('/ack', { done: command.verb + ' ' + command.id });
};
commands.onopen = () => post('/ready', {});
</script>`;

// The large page must fit on the screen (1280x800): AT-SPI lists only what is showing, and a
// focus that scrolled the page would move every listed element.
const LARGE_STYLE = `body{font:10px sans-serif;margin:4px}
h1{font-size:12px;margin:0 0 2px}
.form label{margin:0 4px 0 8px} .form input{width:110px} .form p{display:inline;margin-left:8px}
main{display:grid;grid-template-columns:repeat(5,minmax(0,1fr));gap:2px 6px}
section{border-top:1px solid #ccc} h2{font-size:10px;margin:1px 0} section p{margin:0;color:#555;white-space:nowrap;overflow:hidden}
input{font:10px sans-serif;width:58px;padding:0;margin:0 2px 0 0} .field{display:inline-block;width:50%}
.field label{display:inline-block;width:58px}
button{font:10px sans-serif;padding:0 3px;margin:1px 2px 1px 0}
ul{margin:0;padding:0;list-style:none} nav li{display:inline-block;margin-right:4px}
[role=listbox] li{display:inline-block;width:49%} [role=option]:focus{background:#cde}`;

const SMALL_STYLE = 'body{font:16px sans-serif;margin:24px} label{display:block;margin-top:12px}';

/** The page; with sections, the form shrinks to one line above the catalogue. */
export function renderTestPage(options: PageOptions = {}): PageContent {
  const sections = options.sections ?? 0;
  const formElements: PageElement[] = [
    ...PAGE_FIELDS.map((f) => ({ id: f.id, label: f.label, role: 'entry' as const })),
    { id: PAGE_BUTTON.id, label: PAGE_BUTTON.label, role: 'push button' },
  ];
  const fields = PAGE_FIELDS.map(
    (f) => `<label for="${f.id}">${f.label}</label><input id="${f.id}" type="text">`,
  ).join('\n');
  const button = `<button id="${PAGE_BUTTON.id}" type="button">${PAGE_BUTTON.label}</button>`;
  const head = (style: string) =>
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${PAGE_TITLE}</title>\n<style>${style}</style>\n</head><body>\n<h1>${PAGE_TITLE}</h1>\n`;
  if (sections === 0) {
    return {
      html: `${head(SMALL_STYLE)}${fields}\n<p>${button}</p>\n${SCRIPT}\n</body></html>`,
      elements: formElements,
    };
  }
  const catalogue = Array.from({ length: sections }, (_, n) => catalogueSection(n));
  return {
    html: `${head(LARGE_STYLE)}<div class="form">${fields}<p>${button}</p></div>\n<main>\n${catalogue.map((s) => s.html).join('\n')}\n</main>\n${SCRIPT}\n</body></html>`,
    elements: [...formElements, ...catalogue.flatMap((s) => s.elements)],
  };
}
