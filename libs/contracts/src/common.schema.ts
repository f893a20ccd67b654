import { limits } from './limits';

/**
 * A device name: free text as screenpipe sends it ("MacBook Pro", "monitor_1"), no control
 * characters, at most maxDeviceNameBytes in UTF-8 so that it always fits an AMQP routing key
 * (a name of that many bytes has at most that many characters: maxLength is the cheap bound).
 */
export const deviceNameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: limits.maxDeviceNameBytes,
  'x-max-bytes': limits.maxDeviceNameBytes,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
} as const;

/**
 * ISO 8601 / RFC 3339 date-time with an explicit offset (Z, +00:00, +08:00), 0-9 fraction
 * digits. Dates without a time, times without an offset and impossible dates are refused.
 */
export const dateTimeSchema = { type: 'string', format: 'date-time-offset' } as const;

/** The same, or null where the value may be unknown (formats apply to strings only). */
export const nullableDateTimeSchema = {
  type: ['string', 'null'],
  format: 'date-time-offset',
} as const;
