// A binary min-heap of due times: the scheduler's queue (O(log n) per check, no per-check timer).

export interface HeapEntry { due: number; key: string; gen: number }

export class DueHeap {
  private readonly items: HeapEntry[] = [];

  get size(): number { return this.items.length; }

  peek(): HeapEntry | undefined { return this.items[0]; }

  push(entry: HeapEntry): void {
    const a = this.items;
    a.push(entry);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]!.due <= a[i]!.due) break;
      [a[parent], a[i]] = [a[i]!, a[parent]!];
      i = parent;
    }
  }

  pop(): HeapEntry | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let min = i;
        if (l < a.length && a[l]!.due < a[min]!.due) min = l;
        if (r < a.length && a[r]!.due < a[min]!.due) min = r;
        if (min === i) break;
        [a[min], a[i]] = [a[i]!, a[min]!];
        i = min;
      }
    }
    return top;
  }
}
