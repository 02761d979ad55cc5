// Writes N JSON lines of a typical event (seeded, reproducible) for the Parquet
// benchmark: id BIGINT, user_id BIGINT, kind STRING (8 values), url STRING,
// amount DOUBLE, ts TIMESTAMPTZ, note STRING (about half null).
//   node bench/gen_events.mjs N OUT.jsonl [SEED]
import fs from 'node:fs';

const [n, out, seedArg] = [Number(process.argv[2]), process.argv[3], process.argv[4]];
if (!(n >= 0) || !out) {
  console.error('usage: gen_events.mjs N OUT.jsonl [SEED]');
  process.exit(2);
}
let state = Number(seedArg ?? 12345) >>> 0;
const u32 = () => {  // mulberry32
  let t = (state = (state + 0x6d2b79f5) >>> 0);
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
};
const kKinds = ['click', 'view', 'purchase', 'signup', 'login', 'logout', 'search', 'share'];
const kPaths = [
  '/', '/home', '/products', '/products/item', '/cart', '/checkout', '/search', '/account/settings'
];
const kNotes = [
  'first visit', 'returning customer', 'promo code applied', 'mobile app', 'slow page load',
  'retry after error', 'gift', 'bulk order'
];
const pad = (v, w) => String(v).padStart(w, '0');

let micros = Date.UTC(2024, 0, 1) * 1000;
const fd = fs.openSync(out, 'w');
let buf = '';
for (let i = 0; i < n; ++i) {
  micros += u32() % 2000000;  // events arrive within 2 s of each other
  const d = new Date(Math.floor(micros / 1000));
  const ts = `${d.toISOString().slice(0, 19)}.${pad(micros % 1000000, 6)}+00:00`;
  const kind = kKinds[u32() % 8];
  const url = `https://shop.example.com${kPaths[u32() % 8]}?id=${u32() % 100000}&ref=${
      (u32() % 46656).toString(36)}`;
  const amount = (u32() % 1000000) / 100;
  const note = u32() % 2 === 0 ? null : `${kNotes[u32() % 8]} #${u32() % 1000}`;
  buf += `{"id":${i + 1},"user_id":${u32() % 1000000},"kind":"${kind}","url":"${url}","amount":${
             amount},` +
      `"ts":"${ts}","note":${note === null ? 'null' : `"${note}"`}}\n`;
  if (buf.length > 1 << 20) {
    fs.writeSync(fd, buf);
    buf = '';
  }
}
fs.writeSync(fd, buf);
fs.closeSync(fd);
