export type { Bus, BusEvents, Delivery, Outcome, Subscription } from './bus';
export type { Logger } from './logger';
export type { BackoffOptions } from '@screenfleet/runtime';
export { createAmqpBus, type AmqpBusOptions } from './amqp.bus';
export { moveMessages, retireQueue, type MoveOptions } from './amqp.move';
export { MessageTooLargeError } from './amqp.publisher';
