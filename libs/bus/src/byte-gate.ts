/**
 * Admits work by its size in bytes: at most `maxBytes` in progress, except that one piece is
 * always admitted when nothing is in progress (a message larger than the budget must still get
 * through). Waiters are admitted in arrival order. `pressed` says the budget is taken and work
 * waits: the time to stop asking the broker for more.
 */
export class ByteGate {
  private inProgress = 0;
  private readonly waiting: Array<{ bytes: number; admit: () => void }> = [];

  constructor(readonly maxBytes: number) {}

  get bytesInProgress(): number {
    return this.inProgress;
  }

  get pressed(): boolean {
    return this.waiting.length > 0 || this.inProgress >= this.maxBytes;
  }

  acquire(bytes: number): Promise<void> {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.inProgress += bytes;
      return Promise.resolve();
    }
    return new Promise((admit) => this.waiting.push({ bytes, admit }));
  }

  release(bytes: number): void {
    this.inProgress -= bytes;
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.inProgress += next.bytes;
      next.admit();
    }
  }

  private fits(bytes: number): boolean {
    return this.inProgress === 0 || this.inProgress + bytes <= this.maxBytes;
  }
}
