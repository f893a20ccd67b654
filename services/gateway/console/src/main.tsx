import { h, render } from './vendor/preact.js';
import { App } from './app.js';

const root = document.getElementById('console');
if (root) render(<App />, root);
