import { ConflictError } from '@screenfleet/contracts';

/**
 * Another agent already serves this device: its queue is held by another connection (or this
 * bus serves the device already). Both adapters refuse the second agent the same way, so it
 * fails to start instead of taking half of the device's commands.
 */
export class DeviceTakenError extends ConflictError {
  constructor(
    readonly device: string,
    queue: string,
    options?: { cause?: unknown },
  ) {
    super(
      `device "${device}" is already served by another operator agent (its queue ${queue} is held by another connection): stop that agent, or give this one another device name`,
    );
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}
