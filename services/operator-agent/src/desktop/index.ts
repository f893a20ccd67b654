export * from './desktop';
export * from './linux';
