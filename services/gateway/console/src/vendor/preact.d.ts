// The gateway serves preact's own ES module (node_modules/preact/dist/preact.mjs) at
// ./vendor/preact.js beside the console's files (src/entry/console-assets.ts); its types are
// preact's.
export * from 'preact';
