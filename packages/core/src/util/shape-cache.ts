/**
 * Values computed once per shape of a request (the fields it reads, the columns it writes) and
 * kept for the next request of that shape. Shapes a client chooses (its `select`) are not bounded:
 * a cache that holds `limit` of them starts over.
 */
export class ShapeCache<TValue> {
  private readonly values = new Map<string, TValue>();

  constructor(private readonly limit = 500) {}

  /** The value of `key`, made by `make` on first use. */
  get(key: string, make: () => TValue): TValue {
    let value = this.values.get(key);
    if (value === undefined) {
      if (this.values.size >= this.limit) this.values.clear();
      value = make();
      this.values.set(key, value);
    }
    return value;
  }

  get size(): number {
    return this.values.size;
  }

  clear(): void {
    this.values.clear();
  }
}
