import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IndexedMinHeap } from '../../../src/scheduler/indexed-min-heap.js';
import { mulberry32, randInt } from '../../support/prng.js';

interface Item {
  key: string;
  prio: number;
  seq: number;
}

function newHeap(): IndexedMinHeap<Item> {
  return new IndexedMinHeap<Item>(
    (a, b) => a.prio < b.prio || (a.prio === b.prio && a.seq < b.seq),
    (i) => i.key,
  );
}

function drain(heap: IndexedMinHeap<Item>): Item[] {
  const out: Item[] = [];
  for (let it = heap.pop(); it !== undefined; it = heap.pop()) out.push(it);
  return out;
}

describe('IndexedMinHeap', () => {
  it('pops in priority order, ties in insertion order', () => {
    const heap = newHeap();
    const prios = [5, 3, 9, 1, 3, 7, 0, 3];
    prios.forEach((prio, seq) => heap.set({ key: `k${seq}`, prio, seq }));
    assert.equal(heap.size, prios.length);
    assert.equal(heap.peek()?.key, 'k6');
    const popped = drain(heap).map((i) => i.key);
    assert.deepEqual(popped, ['k6', 'k3', 'k1', 'k4', 'k7', 'k0', 'k5', 'k2']);
    assert.equal(heap.size, 0);
    assert.equal(heap.pop(), undefined);
    assert.equal(heap.peek(), undefined);
  });

  it('replaces an item with the same key, up or down', () => {
    const heap = newHeap();
    for (let i = 0; i < 10; i++) heap.set({ key: `k${i}`, prio: i * 10, seq: i });
    heap.set({ key: 'k9', prio: -1, seq: 10 }); // moves to the top
    heap.set({ key: 'k0', prio: 1000, seq: 11 }); // moves to the bottom
    assert.equal(heap.size, 10);
    assert.equal(heap.get('k9')?.prio, -1);
    const keys = drain(heap).map((i) => i.key);
    assert.equal(keys[0], 'k9');
    assert.equal(keys[keys.length - 1], 'k0');
  });

  it('deletes by key from anywhere and reports absent keys', () => {
    const heap = newHeap();
    for (let i = 0; i < 20; i++) heap.set({ key: `k${i}`, prio: (i * 7) % 20, seq: i });
    assert.equal(heap.delete('k3')?.key, 'k3');
    assert.equal(heap.delete('k3'), undefined);
    assert.equal(heap.has('k3'), false);
    assert.equal(heap.get('k3'), undefined);
    assert.equal(heap.delete('nope'), undefined);
    const prios = drain(heap).map((i) => i.prio);
    assert.equal(prios.length, 19);
    assert.deepEqual(prios, [...prios].sort((a, b) => a - b));
    assert.equal(prios.includes((3 * 7) % 20), false);
  });

  it('update() re-sifts after an in-place change; rebuild() after many', () => {
    const heap = newHeap();
    const items: Item[] = [];
    for (let i = 0; i < 50; i++) {
      const it = { key: `k${i}`, prio: i, seq: i };
      items.push(it);
      heap.set(it);
    }
    (items[49] as Item).prio = -5;
    heap.update('k49');
    assert.equal(heap.peek()?.key, 'k49');
    for (const it of items) it.prio = 100 - it.prio;
    heap.rebuild();
    const prios = drain(heap).map((i) => i.prio);
    assert.deepEqual(prios, [...prios].sort((a, b) => a - b));
  });

  it('collectWhile returns exactly the items matching a monotone predicate', () => {
    const heap = newHeap();
    for (let i = 0; i < 200; i++) heap.set({ key: `k${i}`, prio: (i * 37) % 101, seq: i });
    const got = heap
      .collectWhile((i) => i.prio <= 30)
      .map((i) => i.key)
      .sort();
    const want = heap
      .values()
      .filter((i) => i.prio <= 30)
      .map((i) => i.key)
      .sort();
    assert.ok(want.length > 0);
    assert.deepEqual(got, want);
    assert.deepEqual(heap.collectWhile(() => false), []);
    assert.equal(heap.size, 200, 'collectWhile does not remove');
  });

  it('matches a sorted-array reference under 20,000 random operations', () => {
    const rng = mulberry32(0xc0ffee);
    const heap = newHeap();
    const ref = new Map<string, Item>();
    let seq = 0;
    const refSorted = (): Item[] => [...ref.values()].sort((a, b) => a.prio - b.prio || a.seq - b.seq);
    for (let op = 0; op < 20_000; op++) {
      const r = rng();
      const key = `k${randInt(rng, 0, 299)}`;
      if (r < 0.45) {
        const it = { key, prio: randInt(rng, 0, 1000), seq: seq++ };
        heap.set(it);
        ref.set(key, it);
      } else if (r < 0.65) {
        assert.equal(heap.delete(key)?.key, ref.has(key) ? key : undefined);
        ref.delete(key);
      } else if (r < 0.8) {
        const popped = heap.pop();
        const want = refSorted()[0];
        assert.equal(popped, want);
        if (want !== undefined) ref.delete(want.key);
      } else {
        const existing = ref.get(key);
        if (existing !== undefined) {
          existing.prio = randInt(rng, 0, 1000);
          heap.update(key);
        }
      }
      assert.equal(heap.size, ref.size);
      assert.equal(heap.peek(), refSorted()[0]);
      assert.equal(heap.has(key), ref.has(key));
    }
    assert.deepEqual(drain(heap), refSorted());
  });
});
