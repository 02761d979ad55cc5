// Checks of the row-group statistics sluice writes, through DuckDB:
// - parquet_metadata(): per row group, null counts of every top-level primitive
//   column, exact min/max of int/long/double columns (NaN ignored; a zero
//   min is -0.0 and a zero max +0.0, as parquet-format asks), and string
//   bounds that really bound the values (after truncation);
// - filter pushdown: DuckDB skips row groups by their min/max/null counts, so
//   a wrong (too narrow) statistic shows up as a wrong count(*) for a
//   predicate. Sequential columns make row groups prunable.
import {Canon, ToSql} from './values.mjs';

const kBaseUs = 1704067200000000n;  // 2024-01-01T00:00:00Z

// Columns whose values grow with the row number.
export function SequentialFields() {
  return [
    {name: 'seq_ts', type: {kind: 'timestamptz'}, required: true},
    {name: 'seq_str', type: {kind: 'string'}, required: false},
    {name: 'seq_dec', type: {kind: 'decimal', p: 18, s: 4}, required: false},
    {name: 'seq_ustr', type: {kind: 'string'}, required: true},
  ];
}

// Long common prefixes whose 16-character truncation needs care: ASCII to
// round up, 2-, 3- and 4-byte characters, U+FFFF (rounds up to a 4-byte
// character) and U+10FFFF (cannot be rounded up).
const kPrefixes = [
  'zzzzzzzzzzzzzzzzzzzz', 'é'.repeat(20), '中'.repeat(18), '\uFFFF'.repeat(17),
  '\u{10FFFF}'.repeat(17), 'a\u{10FFFF}'.repeat(9), '\u007F'.repeat(18)
];
const SeqUstr = (i) =>
    `${kPrefixes[Math.floor(i / 90000) % kPrefixes.length]}${String(i).padStart(8, '0')}`;
// UTF-8 byte order = code point order; compares without encoding.
function Utf8Compare(a, b) {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) ++i;
  if (i === n) return a.length - b.length;
  return a.codePointAt(i) - b.codePointAt(i);
}

export function SequentialValues(i) {
  return {
    seq_ts: kBaseUs + BigInt(i) * 1000003n,
    seq_str: i % 10 === 3 ? null : `k${String(i).padStart(8, '0')}`,
    seq_dec: i % 7 === 0 ? null : BigInt(i) * 12345n - 5000000000n,
    seq_ustr: SeqUstr(i),
  };
}

// Random predicates over id and the sequential columns: {sql, test(row)}.
export function MakePredicates(rng, n) {
  const preds = [];
  const range = (lo, hi) => [rng.int(lo, hi), rng.int(lo, hi)].sort((a, b) => a - b);
  const seq = SequentialValues;
  for (let k = 0; k < 3; ++k) {
    const [a, b] = range(0, n - 1);
    preds.push(
        {sql: `id BETWEEN ${a} AND ${b}`, test: (r) => r.id >= BigInt(a) && r.id <= BigInt(b)});
    const [c, d] = range(0, n - 1);
    const lo = seq(c).seq_ts, hi = seq(d).seq_ts;
    const ts = {kind: 'timestamptz'};
    preds.push({
      sql: `seq_ts >= ${ToSql(ts, lo)} AND seq_ts < ${ToSql(ts, hi)}`,
      test: (r) => r.seq_ts >= lo && r.seq_ts < hi
    });
    const s = `k${String(rng.int(0, n)).padStart(8, '0')}`;
    preds.push({sql: `seq_str > '${s}'`, test: (r) => r.seq_str !== null && r.seq_str > s});
    const dec = {kind: 'decimal', p: 18, s: 4};
    const v = BigInt(rng.int(0, n)) * 12345n - 5000000000n + 7n;
    preds.push(
        {sql: `seq_dec <= ${ToSql(dec, v)}`, test: (r) => r.seq_dec !== null && r.seq_dec <= v});
  }
  // Equality on the largest values of row groups and prefixes: pruned away if
  // a truncated max statistic were not rounded up.
  const sql = (v) => ToSql({kind: 'string'}, v);
  for (const j
           of [n - 1, 89999, 179999, 269999, 359999, 449999, 539999, 629999, rng.int(0, n - 1)]) {
    if (j >= n) continue;
    const v = SeqUstr(j);
    preds.push({sql: `seq_ustr = ${sql(v)}`, test: (r) => r.seq_ustr === v});
  }
  const u = SeqUstr(rng.int(0, n - 1));
  preds.push({sql: `seq_ustr >= ${sql(u)}`, test: (r) => Utf8Compare(r.seq_ustr, u) >= 0});
  preds.push({sql: 'seq_str IS NULL', test: (r) => r.seq_str === null});
  preds.push({sql: 'seq_ts IS NULL', test: (r) => r.seq_ts === null});
  return preds;
}

const kMinMaxKinds = new Set(['int', 'long', 'double']);
const kPrimitive = (t) => !['list', 'map', 'struct'].includes(t.kind);

export class StatsOracle {
  constructor(fields, rowGroupSize, predicates) {
    this.fields = fields.filter((f) => kPrimitive(f.type));
    this.rowGroupSize = rowGroupSize;
    this.predicates = predicates;
    this.counts = predicates.map(() => 0);
    this.groups = [];
  }

  // Feeds expected row i (rows must come in order).
  Visit(i, row) {
    this.predicates.forEach((p, k) => {
      if (p.test(row)) ++this.counts[k];
    });
    const g = Math.floor(i / this.rowGroupSize);
    if (!this.groups[g])
      this.groups[g] =
          Object.fromEntries(this.fields.map((f) => [f.name, {nulls: 0, min: null, max: null}]));
    for (const f of this.fields) {
      const s = this.groups[g][f.name];
      const v = row[f.name];
      if (v === null) {
        ++s.nulls;
        continue;
      }
      if (f.type.kind === 'string') {
        if (s.min === null || Utf8Compare(v, s.min) < 0) s.min = v;
        if (s.max === null || Utf8Compare(v, s.max) > 0) s.max = v;
        continue;
      }
      if (!kMinMaxKinds.has(f.type.kind) || Number.isNaN(v)) continue;
      if (s.min === null || v < s.min || (Object.is(v, -0) && s.min === 0)) s.min = v;
      if (s.max === null || v > s.max || (v === 0 && Object.is(s.max, -0))) s.max = v;
    }
  }

  async Check(conn, file) {
    const errors = [];
    const r = await conn.runAndReadAll(
        `SELECT row_group_id AS g, path_in_schema AS col, stats_null_count AS nulls, stats_min_value AS min, ` +
        `stats_max_value AS max FROM parquet_metadata('${file}')`);
    const parse = (f, text) => {
      if (text === null) return null;
      if (f.type.kind !== 'double') return f.type.kind === 'long' ? BigInt(text) : Number(text);
      return {inf: Infinity, '-inf': -Infinity}[text] ?? Number(text);
    };
    for (const row of r.getRowObjects()) {
      const f = this.fields.find((x) => x.name === row.col);
      if (!f) continue;
      const want = this.groups[Number(row.g)]?.[f.name];
      if (!want) {
        errors.push(`row group ${row.g} is not expected`);
        continue;
      }
      const where = `${file} row group ${row.g} column ${f.name}`;
      if (row.nulls === null || Number(row.nulls) !== want.nulls) {
        errors.push(`${where}: null_count ${row.nulls}, expected ${want.nulls}`);
      }
      if (f.type.kind === 'string') {  // truncated bounds: min <= every value <= max
        if (row.min !== null && want.min !== null && Utf8Compare(row.min, want.min) > 0) {
          errors.push(`${where}: min ${JSON.stringify(row.min)} > smallest value ${
              JSON.stringify(want.min)}`);
        }
        if (row.max !== null && want.max !== null && Utf8Compare(row.max, want.max) < 0) {
          errors.push(`${where}: max ${JSON.stringify(row.max)} < largest value ${
              JSON.stringify(want.max)}`);
        }
        continue;
      }
      if (!kMinMaxKinds.has(f.type.kind)) continue;
      const fix = (v, zero) => (v === 0 && f.type.kind === 'double' ? zero : v);
      const [wmin, wmax] = [fix(want.min, -0), fix(want.max, 0)];
      const [amin, amax] = [parse(f, row.min), parse(f, row.max)];
      // DuckDB's parquet_metadata() shows no double min/max when either is
      // infinite (also for files it wrote itself): nothing to compare then.
      if (amin === null && amax === null && !(Number.isFinite(wmin) && Number.isFinite(wmax)) &&
          f.type.kind === 'double') {
        continue;
      }
      if (Canon(f.type, amin) !== Canon(f.type, wmin) ||
          Canon(f.type, amax) !== Canon(f.type, wmax)) {
        errors.push(`${where}: min/max ${row.min}/${row.max}, expected ${Canon(f.type, wmin)}/${
            Canon(f.type, wmax)}`);
      }
    }
    for (const [k, p] of this.predicates.entries()) {
      const c = await conn.runAndReadAll(
          `SELECT count(*) AS n FROM read_parquet('${file}') WHERE ${p.sql}`);
      const got = Number(c.getRowObjects()[0].n);
      if (got !== this.counts[k])
        errors.push(`${file}: count(*) WHERE ${p.sql} = ${got}, expected ${this.counts[k]}`);
    }
    if (errors.length) throw new Error(`statistics:\n    ${errors.slice(0, 12).join('\n    ')}`);
    console.log(
        `  statistics of ${this.groups.length} row groups and ${
            this.predicates.length} pushed-down ` +
        `predicates agree (counts ${this.counts.join(' ')})`);
  }
}
