import { limits, validators, type FieldError } from './index';

const rules = (errors: FieldError[]) => errors.map(({ path, rule }) => ({ path, rule }));
const add = (device_name: string) => ({
  device_name,
  content: { content_type: 'frames', data: [] },
});

describe('device names fit an AMQP routing key (UTF-8 bytes)', () => {
  it('is bounded well under the 255-byte routing key', () => {
    expect(limits.maxDeviceNameBytes).toBeLessThanOrEqual(255);
  });

  it.each([
    ['200 ASCII characters', 'a'.repeat(200)],
    ['100 x "é" (200 bytes)', 'é'.repeat(100)],
    ['50 emoji (200 bytes, 100 UTF-16 units)', '😀'.repeat(50)],
    ['66 x "€" (198 bytes)', '€'.repeat(66)],
  ])('when the name is %s, then it is accepted everywhere', (_, name) => {
    expect(validators.addRequest.check(add(name))).toEqual([]);
    expect(
      validators.pressKeyRequest.check({ element_index: 0, key: 'a', device_name: name }),
    ).toEqual([]);
    expect(validators.listElementsRequest.check({ app_name: 'x', device_name: name })).toEqual([]);
  });

  it.each([
    ['101 x "é" (202 bytes, 101 characters)', 'é'.repeat(101), 'maxBytes'],
    ['51 emoji (204 bytes)', '😀'.repeat(51), 'maxBytes'],
    ['67 x "€" (201 bytes)', '€'.repeat(67), 'maxBytes'],
    ['201 ASCII characters', 'a'.repeat(201), 'maxLength'],
    ['256 ASCII characters (the routing key error of issue 19.3)', 'a'.repeat(256), 'maxLength'],
  ])('when the name is %s, then it is a %s error on device_name', (_, name, rule) => {
    const expected = [{ path: 'device_name', rule }];
    expect(rules(validators.addRequest.check(add(name)))).toEqual(expected);
    expect(
      rules(validators.pressKeyRequest.check({ element_index: 0, key: 'a', device_name: name })),
    ).toEqual(expected);
    expect(
      rules(validators.listElementsRequest.check({ app_name: 'x', device_name: name })),
    ).toEqual(expected);
  });

  it('when a heartbeat carries such a name, then it is refused too', () => {
    expect(
      rules(
        validators.operatorPresence.check({
          device_name: '😀'.repeat(51),
          online: true,
          ttl_ms: 1,
        }),
      ),
    ).toEqual([{ path: 'device_name', rule: 'maxBytes' }]);
  });

  it('when a name is over in bytes, then the detail says bytes', () => {
    expect(validators.addRequest.check(add('é'.repeat(101)))[0]?.detail).toBe(
      'device_name must NOT be longer than 200 bytes in UTF-8',
    );
  });
});
