export type { Bus, BusEvents, Delivery, Outcome, Subscription } from './bus';
export type { Logger } from './logger';
export type { BackoffOptions } from '@screenfleet/runtime';
export { connectServiceBus, createAmqpBus, type AmqpBusOptions } from './amqp.bus';
export {
  createMemoryBus,
  DEFAULT_DELIVERY_LIMIT,
  type DeadLetterReason,
  type DeadLetterSink,
  type MemoryBusOptions,
} from './memory.bus';
export { moveMessages, retireQueue, type MoveOptions } from './amqp.move';
export { MessageTooLargeError } from './message.codec';
export { DeviceTakenError } from './device-taken';
