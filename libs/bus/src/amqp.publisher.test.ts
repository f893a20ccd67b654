import { EventEmitter } from 'node:events';
import type { ConfirmChannel } from 'amqplib';
import { BrokerUnavailableError, createEnvelope, topology } from '@screenfleet/contracts';
import type { ReconnectingConnection } from './amqp.connection';
import { ConfirmPublisher } from './amqp.publisher';
import { MessageTooLargeError } from './message-too-large';
import { silentLogger } from './logger';

// A fake channel is enough here: this is the publisher's own flow control, not the broker's.
class FakeChannel extends EventEmitter {
  published = 0;
  /** What publish() answers: false = "the write buffer is full". */
  accepting = true;
  publish(_e: string, _r: string, _b: Buffer, _p: unknown, confirm: (err: unknown) => void) {
    this.published += 1;
    setImmediate(() => confirm(null));
    return this.accepting;
  }
}

function publisherOn(channel: FakeChannel, limits: { maxMessageBytes?: number } = {}) {
  const connection = { assertUsable: () => undefined } as unknown as ReconnectingConnection;
  const publisher = new ConfirmPublisher(
    connection,
    topology,
    { confirmTimeoutMs: 1000, drainTimeoutMs: 100, maxMessageBytes: 1024, ...limits },
    silentLogger,
  );
  (publisher as unknown as { channel: ConfirmChannel }).channel =
    channel as unknown as ConfirmChannel;
  return publisher;
}

const envelope = (text = 'x') => createEnvelope('content.batch', { text });

describe('ConfirmPublisher', () => {
  it('when the write buffer is full, then the next publish waits for drain and then goes out', async () => {
    const channel = new FakeChannel();
    const publisher = publisherOn(channel);
    channel.accepting = false;
    await publisher.publish('capture', 'content.frames', envelope());
    channel.accepting = true;

    const second = publisher.publish('capture', 'content.frames', envelope());
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(channel.published).toBe(1);
    channel.emit('drain');

    await second;
    expect(channel.published).toBe(2);
  });

  it('when the write buffer never drains, then a publish fails as unavailable after the drain timeout, unwritten', async () => {
    const channel = new FakeChannel();
    const publisher = publisherOn(channel);
    channel.accepting = false;
    await publisher.publish('capture', 'content.frames', envelope());

    const started = Date.now();
    await expect(publisher.publish('capture', 'content.frames', envelope())).rejects.toThrow(
      BrokerUnavailableError,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(channel.published).toBe(1);
  });

  it('when a message is larger than the broker takes, then it is refused before it reaches the channel', async () => {
    const channel = new FakeChannel();
    const publisher = publisherOn(channel, { maxMessageBytes: 512 });

    await expect(
      publisher.publish('capture', 'content.frames', envelope('x'.repeat(600))),
    ).rejects.toThrow(MessageTooLargeError);
    expect(channel.published).toBe(0);
    await publisher.publish('capture', 'content.frames', envelope());
    expect(channel.published).toBe(1);
  });
});
