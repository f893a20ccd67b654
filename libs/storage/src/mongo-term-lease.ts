import { MongoServerError, type Collection } from 'mongodb';
import { DUPLICATE_KEY } from './store-errors';

/**
 * One lease term: whoever inserts term n+1 after reading term n as the newest holds the lease.
 * A free (released) lease is a term with holder null.
 */
export interface LeaseTerm {
  _id: number;
  holder: string | null;
  expires_at: Date;
}

/** Terms older than the newest by more than this are pruned; the newest is never deleted. */
const KEPT_TERMS = 10;

/**
 * A lease as a compare-and-swap on insert-only term documents rather than a findOneAndUpdate on
 * one document: FerretDB v1 runs findAndModify as a query followed by an update by _id, so two
 * processes taking over an expired lease at once could both succeed; the uniqueness of _id on
 * insert is atomic on FerretDB and MongoDB alike.
 */
export function termLease(terms: Collection<LeaseTerm>) {
  const newest = () => terms.find({}).sort({ _id: -1 }).limit(1).next();
  return {
    /** Takes the lease when free or expired, renews it when held: true when held now. */
    async acquire(holder: string, ttlMs: number, now: Date): Promise<boolean> {
      const current = await newest();
      const free =
        !current || current.holder === null || current.expires_at.getTime() < now.getTime();
      if (!free && current.holder !== holder) return false;
      const term = (current?._id ?? 0) + 1;
      const expiresAt = new Date(now.getTime() + ttlMs);
      const inserted = await ignoringDuplicate(() =>
        terms.insertOne({ _id: term, holder, expires_at: expiresAt }),
      );
      if (!inserted) return false; // another process took or renewed the lease meanwhile
      // A reader that saw a term since pruned could insert below the newest: it holds nothing.
      if ((await newest())?._id !== term) return false;
      await terms.deleteMany({ _id: { $lt: term - KEPT_TERMS } });
      return true;
    },

    /** Gives the lease up when held by `holder`. */
    async release(holder: string): Promise<void> {
      const current = await newest();
      if (current?.holder !== holder) return;
      // A duplicate means someone else took the expired lease meanwhile: nothing to give up.
      await ignoringDuplicate(() =>
        terms.insertOne({ _id: current._id + 1, holder: null, expires_at: new Date(0) }),
      );
    },

    /** Who holds the lease now, or null. */
    async holder(now: Date): Promise<string | null> {
      const current = await newest();
      return current && current.expires_at.getTime() >= now.getTime() ? current.holder : null;
    },
  };
}

/** Runs a write; false when it failed only because the _id exists already. */
export async function ignoringDuplicate(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return false;
    throw error;
  }
}
