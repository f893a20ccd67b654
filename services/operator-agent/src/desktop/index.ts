// For composition (open-desktop.ts, the package's index): the port and the Linux adapter. The
// domain and entry import the port alone, './desktop/desktop', which loads no adapter.
export * from './desktop';
export * from './linux';
