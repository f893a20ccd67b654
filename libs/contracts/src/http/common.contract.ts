/** What every route shares: its error body, the plain result, a device name and a date-time. */
import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema, deviceNameSchema } from '../common.schema';
import type { Contract } from '../contract';
import { compileValidator } from '../validate';

export const operationResultSchema = {
  type: 'object',
  required: ['success', 'message'],
  additionalProperties: false,
  properties: {
    success: { type: 'boolean' },
    message: { type: 'string' },
  },
} as const;

/** One failed rule: where in the body (`content.data[0].timestamp`), which rule, and why. */
export const fieldErrorSchema = {
  type: 'object',
  required: ['path', 'rule', 'detail'],
  additionalProperties: false,
  properties: {
    path: { type: 'string' },
    rule: { type: 'string' },
    detail: { type: 'string' },
  },
} as const;

/** Every 4xx/5xx body: which fields failed which rule, so a client can fix its request. */
export const errorBodySchema = {
  type: 'object',
  required: ['success', 'message', 'errors'],
  additionalProperties: false,
  properties: {
    success: { const: false },
    message: { type: 'string' },
    errors: { type: 'array', items: fieldErrorSchema },
    /**
     * The error's kind (validation_failed, conflict, outcome_unknown ...), for clients that
     * must tell apart errors of one status; absent on errors raised before routing (auth).
     */
    code: { type: 'string' },
  },
} as const;

export type OperationResult = FromSchema<typeof operationResultSchema>;
export type ErrorBody = FromSchema<typeof errorBodySchema>;

export const commonContract = {
  validators: {
    operationResult: compileValidator<OperationResult>(operationResultSchema, 'operation result'),
    errorBody: compileValidator<ErrorBody>(errorBodySchema, 'error body'),
  },
  components: {
    OperationResult: operationResultSchema,
    ErrorBody: errorBodySchema,
    FieldError: fieldErrorSchema,
    DeviceName: deviceNameSchema,
    DateTimeWithOffset: dateTimeSchema,
  },
  operations: [],
} satisfies Contract;
