/** A discrete-event queue in virtual milliseconds: a binary heap by (time, insertion order). */
export class EventQueue {
  readonly #heap: { at: number; seq: number; run: () => void }[] = [];
  #seq = 0;
  /** The time of the event being run (or of the last one). */
  now = 0;

  push(at: number, run: () => void): void {
    const heap = this.#heap;
    heap.push({ at, seq: this.#seq++, run });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(i, parent)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  run(): void {
    for (;;) {
      const next = this.#pop();
      if (!next) return;
      this.now = Math.max(this.now, next.at);
      next.run();
    }
  }

  #pop() {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && this.#less(l, m)) m = l;
        if (r < heap.length && this.#less(r, m)) m = r;
        if (m === i) break;
        this.#swap(i, m);
        i = m;
      }
    }
    return top;
  }

  #less(a: number, b: number): boolean {
    const x = this.#heap[a];
    const y = this.#heap[b];
    if (!x || !y) return false;
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  #swap(a: number, b: number): void {
    const heap = this.#heap;
    const x = heap[a];
    const y = heap[b];
    if (!x || !y) return;
    heap[a] = y;
    heap[b] = x;
  }
}
