import { ValidationError } from './errors';
import {
  agentStatuses,
  captureStatuses,
  devicesDefaultLimit,
  devicesMaxLimit,
  deviceSortKeys,
  type AgentStatus,
  type CaptureStatus,
} from './http/devices.routes';
import { queryParameters } from './query-parameters';

/** GET /devices' query, checked. */
export interface DevicesParameters {
  /** At most devicesMaxLimit: a larger `limit` is capped (pagination.limit says so), as /search. */
  limit: number;
  offset: number;
  /**
   * ok | stalled | idle filter on capture_status, online | unresponsive | offline on
   * agent.status: the two sets share no word, so one parameter serves both.
   */
  status?: CaptureStatus | AgentStatus;
  /** device_name: A to Z (the default); last_item_time: newest first, never-sent devices last. */
  sort: (typeof deviceSortKeys)[number];
}

const statuses: readonly string[] = [...captureStatuses, ...agentStatuses];
type Name = 'limit' | 'offset' | 'status' | 'sort';

/**
 * Parses GET /devices' query as express decoded it; unknown parameters are ignored, an empty
 * value is an absent one, a repeated one is a 400. Throws ValidationError naming each bad
 * parameter (`query.status`) and its rule.
 */
export function parseDevicesQuery(query: Readonly<Record<string, unknown>>): DevicesParameters {
  const { errors, fail, text } = queryParameters<Name>(query);
  const integer = (param: 'limit' | 'offset', min: number): number | undefined => {
    const value = text(param);
    if (value === undefined) return undefined;
    if (!/^\d{1,15}$/.test(value)) return fail(param, 'type', `${param} must be a whole number`);
    const number = Number(value);
    return number < min ? fail(param, 'minimum', `${param} must be at least ${min}`) : number;
  };
  const limit = integer('limit', 1);
  const offset = integer('offset', 0);
  const status = text('status');
  if (status !== undefined && !statuses.includes(status)) {
    fail('status', 'enum', `status must be one of: ${statuses.join(', ')}`);
  }
  const sort = text('sort') ?? 'device_name';
  if (!(deviceSortKeys as readonly string[]).includes(sort)) {
    fail('sort', 'enum', `sort must be one of: ${deviceSortKeys.join(', ')}`);
  }
  if (errors.length > 0) {
    throw new ValidationError(`invalid devices query: ${errors[0]?.detail}`, errors);
  }
  return {
    limit: Math.min(limit ?? devicesDefaultLimit, devicesMaxLimit),
    offset: offset ?? 0,
    ...(status !== undefined ? { status: status as CaptureStatus | AgentStatus } : {}),
    sort: sort as DevicesParameters['sort'],
  };
}
