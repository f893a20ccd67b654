import type { ApiOperation, Contract } from './contract';
import { addContract } from './http/add.route';
import { archiveContract } from './http/archive.routes';
import { auditContract } from './http/audit.route';
import { commonContract } from './http/common.contract';
import { dataDeleteContract } from './http/data-delete.routes';
import { devicesContract } from './http/devices.routes';
import { healthContract } from './http/health.route';
import { openApiContract } from './http/openapi.route';
import { operatorContract } from './http/operator.routes';
import { searchContract } from './http/search.route';
import { tokensContract } from './http/tokens.routes';
import { whoAmIContract } from './http/whoami.route';
import { archiveMessagesContract } from './messages/archive.messages';
import { auditMessagesContract } from './messages/audit.messages';
import { contentBatchContract } from './messages/content-batch.message';
import { devicesMessagesContract } from './messages/devices.messages';
import { envelopeContract } from './messages/envelope';
import { operatorMessagesContract } from './messages/operator.messages';
import { searchMessagesContract } from './messages/search.messages';
import { tokensMessagesContract } from './messages/tokens.messages';

/**
 * Every contract module, routes in the order the document lists them. The registries below are
 * read from this list: adding a message or a route is writing its module and naming it here.
 */
const contracts = [
  commonContract,
  searchContract,
  addContract,
  operatorContract,
  archiveContract,
  dataDeleteContract,
  devicesContract,
  healthContract,
  whoAmIContract,
  tokensContract,
  auditContract,
  openApiContract,
  envelopeContract,
  contentBatchContract,
  operatorMessagesContract,
  searchMessagesContract,
  archiveMessagesContract,
  devicesMessagesContract,
  tokensMessagesContract,
  auditMessagesContract,
] as const;

type Contracts = (typeof contracts)[number];
type Merged<T> = (T extends unknown ? (merge: T) => void : never) extends (merge: infer M) => void
  ? M
  : never;

/** One record of every module's `part`; a name two modules use is a mistake, refused at load. */
function merge<Part extends 'validators' | 'components'>(part: Part) {
  const merged: Record<string, unknown> = {};
  for (const contract of contracts as readonly Contract[]) {
    for (const [name, value] of Object.entries(contract[part])) {
      if (name in merged) throw new Error(`contracts: two modules name a ${part} entry ${name}`);
      merged[name] = value;
    }
  }
  return merged as Merged<Contracts[Part]>;
}

/** Compiled once per process (on first use); import these rather than compiling schemas again. */
export const validators = merge('validators');

/** Component name -> the contracts' schema, as exported: the OpenAPI document's components. */
export const componentSchemas = merge('components');
export type ComponentName = keyof typeof componentSchemas;

/** Every route the gateway's API port serves (its /metrics, /healthz and /readyz are on the ops port). */
export const apiOperations: readonly ApiOperation[] = contracts.flatMap(
  (contract: Contract) => contract.operations,
);
