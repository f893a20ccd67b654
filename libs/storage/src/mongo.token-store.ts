import { MongoServerError, type Collection, type MongoClient } from 'mongodb';
import { mongoClient, type MongoClientOptions, type StoreLogger } from './mongo-connection';
import { ignoringDuplicate } from './mongo-term-lease';
import { DUPLICATE_KEY, toStoreError } from './store-errors';
import {
  enrolRefusal,
  tokenConflict,
  type EnrolmentCode,
  type NewEnrolmentCode,
  type StoredToken,
  type TokenRateLimits,
  type TokenStore,
} from './token-store';

export interface MongoTokenStoreOptions extends MongoClientOptions {
  /** Either a URL (the store owns and closes its client) or a client shared with other stores. */
  url?: string;
  client?: MongoClient;
  database: string;
  /** The tokens; their revocations in `<tokens>_revoked`, their last uses in `<tokens>_last_use`. */
  tokensCollection?: string;
  /** The codes; revocations in `<codes>_revoked`, one document per use taken in `<codes>_uses`. */
  codesCollection?: string;
  logger?: StoreLogger;
}

interface TokenDocument {
  _id: string;
  name: string;
  scopes: string[];
  devices: string[] | null;
  created_at: Date;
  expires_at: Date | null;
  secret_hash: string;
  /** Absent on a document stored before tokens had their own limits: read as null. */
  rate_limits?: TokenRateLimits | null;
}

interface CodeDocument {
  _id: string;
  name: string;
  scopes: string[];
  device_pattern: string;
  uses: number;
  created_at: Date;
  expires_at: Date | null;
  code_hash: string;
}

/** A token's or a code's revocation (`_id`: its id); the first one inserted stays. */
interface RevocationDocument {
  _id: string;
  at: Date;
}

/**
 * A reported use of a token (`_id`: `<token id>:<ms>`): the newest of a token's is its last use;
 * older ones are removed once a newer one is stored.
 */
interface LastUseDocument {
  _id: string;
  token_id: string;
  at: Date;
}

/** Use n of a code, taken: `_id` is `<code id>:<n>`, n from 1 to the code's uses. */
interface UseDocument {
  _id: string;
  code_id: string;
  token_id: string;
  at: Date;
}

/**
 * TokenStore over the native driver, insert-only: token and code documents are never updated.
 * A revocation is a document whose `_id` is the revoked id (the first insert wins, a later one
 * meets a duplicate key and changes nothing), each reported last use a document (the newest
 * counts), and each use of a code a document `<code id>:<n>`, n from 1 to its uses (an enrol
 * inserts the first free n; a duplicate key means another took it). Why not `$set`/`$inc` on the
 * one document: FerretDB v1 runs an update as a read and a replace of the whole document, so a
 * last use written while a revocation was could bring the token back to life, two enrols could
 * take the same last use, and concurrent `$inc`s lost increments (this project saw that loss on
 * the device counters and the archive state); an insert with a unique `_id` is atomic on
 * FerretDB and MongoDB alike. Plain CRUD, no transactions; every operation has the client's
 * deadlines (mongo-connection.ts) and its errors go through toStoreError.
 */
export function createMongoTokenStore(options: MongoTokenStoreOptions): TokenStore {
  const { client, owned } = clientFor(options);
  const db = client.db(options.database);
  const tokensName = options.tokensCollection ?? 'tokens';
  const codesName = options.codesCollection ?? 'enrolment_codes';
  const tokens = db.collection<TokenDocument>(tokensName);
  const tokensRevoked = db.collection<RevocationDocument>(`${tokensName}_revoked`);
  const lastUses = db.collection<LastUseDocument>(`${tokensName}_last_use`);
  const codes = db.collection<CodeDocument>(codesName);
  const codesRevoked = db.collection<RevocationDocument>(`${codesName}_revoked`);
  const uses = db.collection<UseDocument>(`${codesName}_uses`);

  // The unique hashes are what refuse a second token with the same secret, so every write
  // makes sure they exist first (once per store; again after a failure).
  let indexes: Promise<void> | undefined;
  function ensureIndexes(): Promise<void> {
    indexes ??= (async () => {
      // One createIndex at a time: FerretDB v1 drops the connection when a multi-index
      // createIndexes finds them all existing.
      await tokens.createIndex({ secret_hash: 1 }, { unique: true, name: 'secret_hash_unique' });
      await codes.createIndex({ code_hash: 1 }, { unique: true, name: 'code_hash_unique' });
      await uses.createIndex({ code_id: 1 }, { name: 'code_id_1' });
      await lastUses.createIndex({ token_id: 1, at: 1 }, { name: 'token_id_1_at_1' });
    })().catch((error: unknown) => {
      indexes = undefined;
      throw error;
    });
    return indexes;
  }

  async function revocations(
    collection: Collection<RevocationDocument>,
    ids: string[],
  ): Promise<Map<string, Date>> {
    const found = await collection.find({ _id: { $in: ids } }).toArray();
    return new Map(found.map((revocation) => [revocation._id, revocation.at]));
  }

  async function storedTokens(filter: { _id?: string }): Promise<StoredToken[]> {
    const found = await tokens.find(filter).toArray();
    const ids = found.map((token) => token._id);
    const [revoked, used] = await Promise.all([
      revocations(tokensRevoked, ids),
      lastUses.find({ token_id: { $in: ids } }).toArray(),
    ]);
    const lastUsed = new Map<string, Date>();
    for (const { token_id: id, at } of used) {
      if ((lastUsed.get(id)?.getTime() ?? -Infinity) < at.getTime()) lastUsed.set(id, at);
    }
    return sortByCreation(
      found.map((token) => tokenOf(token, revoked.get(token._id), lastUsed.get(token._id))),
    );
  }

  async function storedCodes(filter: { _id?: string; code_hash?: string }) {
    const found = await codes.find(filter).toArray();
    const ids = found.map((code) => code._id);
    const [revoked, taken] = await Promise.all([
      revocations(codesRevoked, ids),
      uses.find({ code_id: { $in: ids } }, { projection: { code_id: 1 } }).toArray(),
    ]);
    const takenBy = new Map<string, number>();
    for (const use of taken) takenBy.set(use.code_id, (takenBy.get(use.code_id) ?? 0) + 1);
    return sortByCreation(
      found.map((code) => codeOf(code, revoked.get(code._id), takenBy.get(code._id) ?? 0)),
    );
  }

  async function insertToken(token: StoredToken): Promise<void> {
    await ensureIndexes();
    try {
      await tokens.insertOne(tokenDocument(token));
    } catch (error) {
      if (!isDuplicate(error)) throw error;
      const sameId = await tokens.findOne({ _id: token.id }, { projection: { _id: 1 } });
      throw tokenConflict('token', token.id, sameId ? 'id' : 'secretHash');
    }
  }

  /** Takes the first free use of `code` for `tokenId`: its `_id`, or null when none is left. */
  async function takeUse(code: EnrolmentCode, tokenId: string, at: Date): Promise<string | null> {
    const taken = new Set(
      (await uses.find({ code_id: code.id }, { projection: { _id: 1 } }).toArray()).map(
        (use) => use._id,
      ),
    );
    for (let n = 1; n <= code.uses; n++) {
      const id = `${code.id}:${n}`;
      if (taken.has(id)) continue;
      // A duplicate key: another enrol took use n meanwhile; try the next.
      if (
        await ignoringDuplicate(() =>
          uses.insertOne({ _id: id, code_id: code.id, token_id: tokenId, at }),
        )
      ) {
        return id;
      }
    }
    return null;
  }

  return {
    ensureSchema: () => translated('ensureSchema', ensureIndexes),

    insertToken: (token) => translated('insertToken', () => insertToken(token)),

    listTokens: ({ includeRevoked = false } = {}) =>
      translated('listTokens', async () => {
        const all = await storedTokens({});
        return includeRevoked ? all : all.filter((token) => token.revokedAt === null);
      }),

    revokeToken: (id, at) =>
      translated('revokeToken', async () => {
        if (!(await tokens.findOne({ _id: id }, { projection: { _id: 1 } }))) return null;
        await ignoringDuplicate(() => tokensRevoked.insertOne({ _id: id, at })); // first stays
        return (await storedTokens({ _id: id }))[0] ?? null;
      }),

    recordLastUse: (reported) =>
      translated('recordLastUse', async () => {
        const latest = new Map<string, Date>();
        for (const { id, at } of reported) {
          const known = latest.get(id);
          if (!known || known.getTime() < at.getTime()) latest.set(id, at);
        }
        if (latest.size === 0) return;
        const known = await tokens
          .find({ _id: { $in: [...latest.keys()] } }, { projection: { _id: 1 } })
          .toArray();
        for (const { _id: id } of known) {
          const at = latest.get(id)!;
          // Insert-only, so no write can undo a later one: the newest document is the last
          // use, and only a writer that stored a newer one first removes the older ones.
          await ignoringDuplicate(() =>
            lastUses.insertOne({ _id: `${id}:${at.getTime()}`, token_id: id, at }),
          );
          await lastUses.deleteMany({ token_id: id, at: { $lt: at } });
        }
      }),

    insertEnrolmentCode: (code) =>
      translated('insertEnrolmentCode', async () => {
        await ensureIndexes();
        try {
          await codes.insertOne(codeDocument(code));
        } catch (error) {
          if (!isDuplicate(error)) throw error;
          const sameId = await codes.findOne({ _id: code.id }, { projection: { _id: 1 } });
          throw tokenConflict('enrolment code', code.id, sameId ? 'id' : 'codeHash');
        }
      }),

    listEnrolmentCodes: ({ includeRevoked = false } = {}) =>
      translated('listEnrolmentCodes', async () => {
        const all = await storedCodes({});
        return includeRevoked ? all : all.filter((code) => code.revokedAt === null);
      }),

    revokeEnrolmentCode: (id, at) =>
      translated('revokeEnrolmentCode', async () => {
        if (!(await codes.findOne({ _id: id }, { projection: { _id: 1 } }))) return null;
        await ignoringDuplicate(() => codesRevoked.insertOne({ _id: id, at }));
        return (await storedCodes({ _id: id }))[0] ?? null;
      }),

    enrol: (codeHash, at, makeToken) =>
      translated('enrol', async () => {
        await ensureIndexes();
        const [code] = await storedCodes({ code_hash: codeHash });
        if (!code) return { ok: false, reason: 'unknown' } as const;
        const refusal = enrolRefusal(code, at);
        if (refusal) return { ok: false, reason: refusal } as const;
        const token = makeToken(code);
        const use = await takeUse(code, token.id, at);
        if (!use) return { ok: false, reason: 'used_up' } as const;
        // A revocation stored between the read above and the use: refused as if it came first.
        // One stored after this check comes after the enrol, as a revocation of a token would.
        if (await codesRevoked.findOne({ _id: code.id }, { projection: { _id: 1 } })) {
          await uses.deleteOne({ _id: use });
          return { ok: false, reason: 'revoked' } as const;
        }
        try {
          await insertToken(token);
        } catch (error) {
          // The token is not stored: give the use back. Should that fail too (the store gone
          // meanwhile), the code has one use fewer: the caller sees the error either way.
          await uses.deleteOne({ _id: use }).catch(() => undefined);
          throw error;
        }
        return { ok: true, token, code } as const;
      }),

    close: async () => {
      if (owned) await client.close();
    },
  };
}

function clientFor(options: MongoTokenStoreOptions): { client: MongoClient; owned: boolean } {
  if (options.client) return { client: options.client, owned: false };
  if (!options.url) throw new TypeError('the token store needs a url or a client');
  return {
    client: mongoClient(options.url, options, options.logger, 'token store'),
    owned: true,
  };
}

function tokenDocument(token: StoredToken): TokenDocument {
  return {
    _id: token.id,
    name: token.name,
    scopes: token.scopes,
    devices: token.devices,
    created_at: token.createdAt,
    expires_at: token.expiresAt,
    secret_hash: token.secretHash,
    rate_limits: token.rateLimits,
  };
}

function tokenOf(document: TokenDocument, revokedAt?: Date, lastUsedAt?: Date): StoredToken {
  return {
    id: document._id,
    name: document.name,
    scopes: document.scopes,
    devices: document.devices,
    createdAt: document.created_at,
    expiresAt: document.expires_at,
    lastUsedAt: lastUsedAt ?? null,
    revokedAt: revokedAt ?? null,
    secretHash: document.secret_hash,
    rateLimits: document.rate_limits ?? null,
  };
}

function codeDocument(code: NewEnrolmentCode): CodeDocument {
  return {
    _id: code.id,
    name: code.name,
    scopes: code.scopes,
    device_pattern: code.devicePattern,
    uses: code.uses,
    created_at: code.createdAt,
    expires_at: code.expiresAt,
    code_hash: code.codeHash,
  };
}

function codeOf(document: CodeDocument, revokedAt: Date | undefined, usesTaken: number) {
  return {
    id: document._id,
    name: document.name,
    scopes: document.scopes,
    devicePattern: document.device_pattern,
    uses: document.uses,
    usesTaken,
    createdAt: document.created_at,
    expiresAt: document.expires_at,
    revokedAt: revokedAt ?? null,
    codeHash: document.code_hash,
  } satisfies EnrolmentCode;
}

function sortByCreation<T extends { createdAt: Date; id: string }>(rows: T[]): T[] {
  return rows.sort(
    (a, b) =>
      a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

function isDuplicate(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

async function translated<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toStoreError(error, operation, 'token store');
  }
}
