import type { Envelope } from '@screenfleet/contracts';
import { createMemoryBus, type Bus } from '@screenfleet/bus';
import { describeBusContract, type BusUnderTest } from './bus.contract';
import { waitUntil, type TestTopology } from './support';

/**
 * One process has one bus: buses started for the same topology are the same bus. A publish
 * resolves once handled; dead letters go to the sink, recorded here by queue.
 */
function memoryBus(): BusUnderTest {
  const buses = new Map<TestTopology, Bus>();
  const deadLetters: Array<{ queue: string; envelope: Envelope }> = [];
  return {
    confirms: 'handled',
    startBus(t) {
      let bus = buses.get(t);
      if (!bus) {
        bus = createMemoryBus({
          topology: t.topology,
          operatorExchange: t.operator,
          deadLetter: (queue, envelope) => {
            deadLetters.push({ queue, envelope });
            return Promise.resolve();
          },
        });
        buses.set(t, bus);
      }
      return Promise.resolve(bus);
    },
    watchDeadLetters(bus, t) {
      const from = () =>
        deadLetters.filter(({ queue }) => queue === t.queue).map(({ envelope }) => envelope);
      return Promise.resolve({
        arrived: (count) =>
          waitUntil(bus, 'dead-lettered', () => from().length >= count).then(from),
      });
    },
    async cleanup() {
      await Promise.all([...buses.values()].map((bus) => bus.close()));
      buses.clear();
      deadLetters.length = 0;
    },
  };
}

describeBusContract('memory', memoryBus);
