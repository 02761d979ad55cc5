// Seeded pseudo-random numbers for reproducible differential tests.
// Rng(seed) is deterministic across runs and platforms (mulberry32 core).
export class Rng {
  constructor(seed) {
    this.state = seed >>> 0;
  }
  // Uniform 32-bit unsigned integer.
  u32() {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  // Uniform float in [0, 1).
  next() {
    return this.u32() / 4294967296;
  }
  // Integer in [lo, hi] (inclusive, both safe integers).
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  bool(p = 0.5) {
    return this.next() < p;
  }
  pick(items) {
    return items[Math.floor(this.next() * items.length)];
  }
  // Uniform BigInt in [lo, hi] (inclusive).
  bigint(lo, hi) {
    const span = hi - lo + 1n;
    let r = 0n;
    for (let i = 0; i < 5; ++i) r = (r << 32n) | BigInt(this.u32());
    return lo + (r % span);
  }
  bytes(n) {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; ++i) b[i] = this.u32() & 0xff;
    return b;
  }
}
