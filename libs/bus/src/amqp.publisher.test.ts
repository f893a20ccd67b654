import { EventEmitter } from 'node:events';
import { BrokerUnavailableError, createEnvelope, topology } from '@screenfleet/contracts';
import type { ReconnectingConnection } from './amqp.connection';
import { ConfirmPublisher } from './amqp.publisher';
import { MessageTooLargeError } from './message.codec';
import { silentLogger } from './logger';

// A fake channel is enough here: this is the publisher's own flow control, not the broker's.
class FakeChannel extends EventEmitter {
  published = 0;
  closed = false;
  /** What publish() answers: false = "the write buffer is full". */
  accepting = true;
  /** Nack every publish, as amqplib reports a basic.nack. */
  nacking = false;
  publish(_e: string, _r: string, _b: Buffer, _p: unknown, confirm: (err: unknown) => void) {
    this.published += 1;
    setImmediate(() => confirm(this.nacking ? new Error('message nacked') : null));
    return this.accepting;
  }
  waitForConfirms() {
    return new Promise<void>((resolve) => setImmediate(resolve));
  }
  close() {
    this.closed = true;
    return Promise.resolve();
  }
}

function publisherOn(channel: FakeChannel, limits: { maxMessageBytes?: number } = {}) {
  const reopened: string[] = [];
  const connection = {
    assertUsable: () => undefined,
    channelLost: (_user: unknown, _model: unknown, name: string) => reopened.push(name),
  } as unknown as ReconnectingConnection;
  const publisher = new ConfirmPublisher(
    connection,
    topology,
    { confirmTimeoutMs: 1000, drainTimeoutMs: 100, maxMessageBytes: 1024, ...limits },
    silentLogger,
  );
  Object.assign(publisher, { channel, model: {} });
  return Object.assign(publisher, { reopened });
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

  it('when the broker nacks a publish, then it is refused as not stored, the next publish does not use that channel, and the channel is closed and a fresh one asked for', async () => {
    const channel = new FakeChannel();
    const publisher = publisherOn(channel);
    channel.nacking = true;

    await expect(publisher.publish('capture', 'content.frames', envelope())).rejects.toThrow(
      'the broker did not take the message: message nacked',
    );
    await expect(publisher.publish('capture', 'content.frames', envelope())).rejects.toThrow(
      'the publish channel is reopening',
    );
    expect(channel.published).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(channel.closed).toBe(true);
    expect(publisher.reopened).toEqual(['publish']);
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
