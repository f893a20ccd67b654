import type { FromSchema } from 'json-schema-to-ts';
import { nullableDateTimeSchema } from '../common.schema';
import type { ApiOperation, Contract } from '../contract';
import { compileValidator } from '../validate';

const captureStates = ['ok', 'stale', 'no data'] as const;

/**
 * GET /health, screenpipe's shape (its server's HealthCheckResponse), so its clients' polling
 * works: `status` healthy | unhealthy (a content type stale) | degraded (the broker, the store
 * or the ingest workers down: `message` names which); `frame_status`/`audio_status` from the
 * newest frame/transcription the caller may see: ok, stale (nothing received for
 * CAPTURE_STALL_AFTER), or "no data".
 */
export const healthAnswerSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'status',
    'status_code',
    'last_frame_timestamp',
    'last_audio_timestamp',
    'frame_status',
    'audio_status',
    'message',
    'verbose_instructions',
  ],
  properties: {
    status: { enum: ['healthy', 'unhealthy', 'degraded'] },
    status_code: { enum: [200, 500, 503] },
    last_frame_timestamp: nullableDateTimeSchema,
    last_audio_timestamp: nullableDateTimeSchema,
    frame_status: { enum: captureStates },
    audio_status: { enum: captureStates },
    message: { type: 'string' },
    verbose_instructions: { type: ['string', 'null'] },
  },
} as const;

export type HealthAnswer = FromSchema<typeof healthAnswerSchema>;

export const healthRoute: ApiOperation = {
  method: 'get',
  path: '/health',
  operationId: 'health',
  tag: 'meta',
  summary: "screenpipe's health: is capture flowing, is the service whole",
  description:
    "screenpipe's GET /health shape for its clients, which poll it; no token needed and no " +
    'device names. Always HTTP 200, the state in the body, as screenpipe answers: `healthy` ' +
    '(200); `unhealthy` (500) when the newest frame or transcription is older than ' +
    'CAPTURE_STALL_AFTER (`stale`; `no data` when none); `degraded` (503) when the broker, the ' +
    'content store or the ingest workers are unavailable, `message` naming which. A valid token ' +
    'bound to devices narrows the times to its devices. The times may be up to about a second ' +
    'old: each gateway reads them about once a second, however many clients poll. Without a ' +
    'valid token the request must be addressed to a loopback Host (127.0.0.1, localhost, [::1]) ' +
    'or one in GATEWAY_HEALTH_ALLOWED_HOSTS, else 403 (DNS rebinding); with one, any Host.',
  scope: null,
  response: {
    schema: healthAnswerSchema,
    description: 'The state.',
    example: {
      status: 'healthy',
      status_code: 200,
      last_frame_timestamp: '2026-11-22T10:00:00.123Z',
      last_audio_timestamp: '2026-11-22T09:59:58.000Z',
      frame_status: 'ok',
      audio_status: 'ok',
      message: 'all systems are functioning normally.',
      verbose_instructions: null,
    },
  },
  errors: [403, 405],
};

export const healthContract = {
  validators: { healthAnswer: compileValidator<HealthAnswer>(healthAnswerSchema, 'health answer') },
  components: { HealthAnswer: healthAnswerSchema },
  operations: [healthRoute],
} satisfies Contract;
