import { AppError } from '@screenfleet/contracts';

/**
 * The body that arrived is not the one the caller hashed: nothing was stored (or the previous
 * object under the key is left as it was). Not a transient outage, so not StoreUnavailableError.
 */
export class ChecksumMismatchError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('operation_failed', message, [], options);
  }
}
