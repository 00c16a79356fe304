/** Splits a list into lists of at most `size` items (statements have limits on their parameters). */
export function chunks<TItem>(items: readonly TItem[], size: number): TItem[][] {
  const out: TItem[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
