/**
 * The storage adapters, loaded when a mode first opens a store: the gateway and the operator
 * agent open none, so their processes never load the MongoDB driver or SQLite's native library.
 */
export const storageAdapters = () => import('@screenfleet/storage');
