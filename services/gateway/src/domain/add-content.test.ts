import {
  BrokerUnavailableError,
  OutcomeUnknownError,
  sizeLimits,
  TooLargeError,
  ValidationError,
  type AddRequest,
  type ContentBatch,
  type Envelope,
} from '@screenfleet/contracts';
import { addContent } from './add-content';

// A fake bus records what would be published: this is the splitting and refusal logic.
function recordingBus() {
  const messages: Array<{ bytes: number; payload: ContentBatch }> = [];
  return {
    messages,
    publish: (_exchange: string, _key: string, envelope: Envelope) => {
      messages.push({
        bytes: Buffer.byteLength(JSON.stringify(envelope)),
        payload: envelope.payload as ContentBatch,
      });
      return Promise.resolve();
    },
  };
}

const frames = (data: unknown[]): AddRequest =>
  ({ device_name: 'desk-1', content: { content_type: 'frames', data } }) as AddRequest;
const context = { receivedAt: new Date('2026-11-22T12:00:00Z'), requestId: 'r1' };
const text = (n: number) => 'x'.repeat(n);

describe('addContent', () => {
  it('when a batch is near the body limit, then it goes out in several messages, each under the broker limit, items in order', async () => {
    const bus = recordingBus();
    const items = Array.from({ length: 60 }, (_, i) => ({
      file_path: `f${i}`,
      ocr_results: [{ text: text(256 * 1024) }],
    }));

    const accepted = await addContent(bus, frames(items), context);

    expect(accepted.items).toBe(60);
    expect(accepted.messages).toBe(bus.messages.length);
    expect(bus.messages.length).toBeGreaterThan(1);
    for (const message of bus.messages) {
      expect(message.bytes).toBeLessThanOrEqual(sizeLimits.targetMessageBytes + 256 * 1024);
      expect(message.payload.received_at).toBe('2026-11-22T12:00:00.000Z');
    }
    const paths = bus.messages.flatMap((m) =>
      (m.payload.request.content.data as Array<{ file_path: string }>).map((d) => d.file_path),
    );
    expect(paths).toEqual(items.map((i) => i.file_path));
  });

  it('when one item alone is larger than a broker message, then it is too large (413) naming the item and nothing is published', async () => {
    const bus = recordingBus();
    const request = frames([
      { file_path: 'small' },
      { file_path: 'big', ocr_results: [{ text: text(sizeLimits.maxMessageBytes) }] },
    ]);

    const error = await addContent(bus, request, context).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TooLargeError);
    expect(error).toMatchObject({ code: 'too_large', fieldErrors: [{ path: 'content.data[1]' }] });
    expect(bus.messages).toEqual([]);
  });

  it('when an item would be stored as a document over 16 MiB, then 400 names the item and nothing is published', async () => {
    const bus = recordingBus();
    // Small in JSON per OCR result, large once stored: 1000 results, nearly 16 MiB of text.
    const results = Array.from({ length: 1000 }, () => ({ text: text(16_770) }));
    const request = frames([{ file_path: 'a', ocr_results: results }]);

    const error = await addContent(bus, request, context).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({
      fieldErrors: [{ path: 'content.data[0]', rule: 'maxStoredBytes' }],
    });
    expect(bus.messages).toEqual([]);
  });

  it('when a transcription is posted, then it is one message', async () => {
    const bus = recordingBus();
    await addContent(
      bus,
      {
        device_name: 'mic',
        content: { content_type: 'transcription', data: { transcription: 'hi' } },
      },
      context,
    );
    expect(bus.messages).toHaveLength(1);
  });

  describe('when publishing fails', () => {
    // Four parts of a large batch; the bus answers each part as told.
    const largeBatch = () =>
      frames(
        Array.from({ length: 16 }, (_, i) => ({
          file_path: `f${i}`,
          ocr_results: [{ text: text(1024 * 1024) }],
        })),
      );
    const failingBus = (answer: (part: number) => Error | undefined) => {
      let part = 0;
      return {
        publish: () => {
          const error = answer(part++);
          return error ? Promise.reject(error) : Promise.resolve();
        },
      };
    };

    it('when no part was stored, then the broker error is passed on (503: nothing stored)', async () => {
      const down = new BrokerUnavailableError('not connected to the broker');

      const error = await addContent(
        failingBus(() => down),
        largeBatch(),
        context,
      ).catch((e: unknown) => e);

      expect(error).toBe(down);
    });

    it('when some parts were confirmed and one was not, then it is outcome_unknown, never a 503', async () => {
      const error = await addContent(
        failingBus((part) => (part === 2 ? new BrokerUnavailableError('nacked') : undefined)),
        largeBatch(),
        context,
      ).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect((error as Error).message).toMatch(/never stored twice/);
    });

    it("when one part's outcome is unknown, then the batch's is", async () => {
      const error = await addContent(
        failingBus((part) =>
          part === 0
            ? new OutcomeUnknownError('the broker did not confirm within 5000 ms')
            : new BrokerUnavailableError('not connected to the broker'),
        ),
        largeBatch(),
        context,
      ).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect((error as Error).message).toMatch(/did not confirm within 5000 ms/);
    });
  });
});
