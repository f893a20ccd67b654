import { queueNames, validators } from '@screenfleet/contracts';
import type { Bus, Subscription } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';

/**
 * When to load the stored tokens again (ADR 0019): on each tokens.changed, read from the
 * tokens.events stream as the presence stream is read (every gateway reads every event, no
 * queue per gateway), and on every broker (re)connect, since events sent while this gateway was
 * away are not replayed to it. `refresh` coalesces bursts.
 */
export async function followTokenChanges(deps: {
  bus: Pick<Bus, 'consume' | 'events'>;
  refresh: () => Promise<void>;
  logger: Logger;
}): Promise<{ stop(): Promise<void> }> {
  const logger = deps.logger.child({ component: 'token-events' });
  const onConnected = () => void deps.refresh();
  deps.bus.events.on('connected', onConnected);
  let subscription: Subscription | undefined;
  try {
    subscription = await deps.bus.consume<unknown>(
      queueNames.tokensEvents,
      ({ envelope }) => {
        const errors = validators.tokensChanged.check(envelope.payload);
        // Still a sign that something changed: loading once more costs a snapshot.
        if (errors.length > 0) logger.warn({ errors }, 'an invalid tokens.changed message');
        else logger.debug({ change: envelope.payload }, 'the stored tokens changed');
        void deps.refresh();
        // A stream keeps its entries whatever we answer; ack is flow control only.
        return Promise.resolve('ack');
      },
      { prefetch: 100 },
    );
  } catch (error) {
    deps.bus.events.off('connected', onConnected);
    throw error;
  }
  return {
    async stop() {
      deps.bus.events.off('connected', onConnected);
      await subscription?.cancel();
      subscription = undefined;
    },
  };
}
