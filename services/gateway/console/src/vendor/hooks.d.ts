// preact/hooks' ES module, served at ./vendor/hooks.js with its one import of "preact" pointed at
// ./preact.js (src/entry/console-assets.ts); its types are preact's.
export * from 'preact/hooks';
