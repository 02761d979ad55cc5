// Shared machinery of the differential tests: generating rows, reading a
// Parquet file through DuckDB, comparing with expected rows and with sluice's
// `cat`, checking the Parquet schema and codecs. InitHarness() must be called
// first with {conn (DuckDB connection), sluice (lib/sluice_cli.mjs), fake, tmp}.
import fs from 'node:fs';

import {FromDuck, FromJson, ParseJsonLossless, TruncateTzNs} from './normalize.mjs';
import {ExpectedParquetElements} from './types.mjs';
import {Canon, RandomFieldValue, RowToJson, SameValue} from './values.mjs';

const kMaxReported = 10;

export const ctx = {
  conn: null,
  sluice: null,
  fake: false,
  tmp: null,
  lossyNoted: false
};

export function InitHarness(c) {
  Object.assign(ctx, c);
}

// Collects mismatches of one case and prints the first few.
export class Mismatches {
  constructor(file) {
    this.file = file;
    this.count = 0;
  }
  Add(row, column, expected, actual) {
    if (this.count++ < kMaxReported) {
      console.log(
          `  MISMATCH file ${this.file} row ${row} column ${column}:\n` +
          `    expected ${expected}\n    actual   ${actual}`);
    }
  }
  Check(what) {
    if (this.count > 0) throw new Error(`${this.count} mismatches in ${what}`);
  }
}

// Runs every check, then fails with all their messages.
export async function AllOf(checks) {
  const errors = [];
  for (const check of checks) {
    try {
      await check();
    } catch (e) {
      errors.push(e.message);
    }
  }
  if (errors.length) throw new Error(errors.join('\n  '));
}

export function GenerateRows(rng, fields, n) {
  const rows = [];
  for (let i = 0; i < n; ++i) {
    const row = {id: BigInt(i)};
    for (const f of fields.slice(1)) row[f.name] = RandomFieldValue(rng, f);
    rows.push(row);
  }
  return rows;
}

export function WriteJsonl(file, fields, rows) {
  fs.writeFileSync(file, rows.map((r) => RowToJson(fields, r) + '\n').join(''));
}

// Streams `sql` from DuckDB and calls visit(rowIndex, rowObject) per row.
export async function DuckRows(sql, visit) {
  const result = await ctx.conn.stream(sql);
  const names = result.columnNames();
  let i = 0;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0;
       chunk = await result.fetchChunk()) {
    for (const row of chunk.getRowObjects(names)) visit(i++, row);
  }
  return i;
}

export const ReadParquetSql = (file) => `SELECT * EXCLUDE (file_row_number) FROM read_parquet('${
    file}', file_row_number=true) ORDER BY file_row_number`;

// Compares DuckDB's reading of `file` with `expectedRow(i)`.
// `onRow(i, expected)` (optional) sees every expected row in order.
export async function CompareDuckWithExpected(file, fields, expectedRow, n, onRow = null) {
  const mm = new Mismatches(file);
  const lossy = {note: null};
  const count = await DuckRows(ReadParquetSql(file), (i, row) => {
    if (i >= n) return;
    const exp = expectedRow(i);
    if (onRow) onRow(i, exp);
    for (const f of fields) {
      let av;
      let actual = null;
      try {
        av = FromDuck(f.type, row[f.name], lossy);
      } catch (e) {
        actual = `<${e.message}>`;
      }
      const ev = lossy.note ? TruncateTzNs(f.type, exp[f.name]) : exp[f.name];  // after FromDuck
      if (actual === null && SameValue(av, ev)) continue;
      actual ??= Canon(f.type, av);
      const expected = Canon(f.type, ev);
      if (actual !== expected) mm.Add(i, f.name, expected, actual);
    }
  });
  if (lossy.note && !ctx.lossyNoted)
    console.log(`  note: ${lossy.note}; compared those at µs precision`);
  ctx.lossyNoted ||= lossy.note !== null;
  if (count !== n) throw new Error(`DuckDB read ${count} rows from ${file}, expected ${n}`);
  mm.Check(`DuckDB's reading of ${file}`);
}

// parquet_schema(): names, field ids, repetitions and physical types as the
// Iceberg spec maps sluice's types.
export async function CheckFieldIds(file, fields) {
  const r = await ctx.conn.runAndReadAll(
      `SELECT name, field_id, repetition_type AS rep, type, type_length FROM parquet_schema('${
          file}')`);
  const actual = r.getRowObjects().slice(1);
  const expected = ExpectedParquetElements(fields);
  // DuckDB posing as sluice cannot write REQUIRED columns or FIXED: ids only.
  const fmt = (e) =>
      `${e.name ?? '*'} id=${e.id ?? '-'}` + (ctx.fake ? '' : ` ${e.rep} ${e.phys ?? 'group'}`);
  const problems = [];
  for (let i = 0; i < Math.max(actual.length, expected.length); ++i) {
    const exp = expected[i] ? fmt(expected[i]) : '(none)';
    const a = actual[i];
    const act = a ? fmt({
      name: expected[i]?.name === null ? null : a.name,
      id: a.field_id === null ? null : Number(a.field_id),
      rep: a.rep,
      phys: a.type === null                 ? null :
          a.type === 'FIXED_LEN_BYTE_ARRAY' ? `${a.type}(${a.type_length})` :
                                              a.type
    }) :
                                              '(none)';
    if (exp !== act) problems.push(`element ${i + 1}: expected ${exp}, actual ${act}`);
  }
  if (problems.length)
    throw new Error(`parquet schema of ${file}:\n    ${problems.slice(0, 10).join('\n    ')}`);
}

export async function CheckCodec(file, codec) {
  const r = await ctx.conn.runAndReadAll(
      `SELECT DISTINCT compression, count(DISTINCT row_group_id) OVER () AS groups FROM parquet_metadata('${
          file}')`);
  const rows = r.getRowObjects();
  const want = codec.toUpperCase();
  for (const row of rows) {
    if (row.compression !== want)
      throw new Error(`${file}: column chunk compressed with ${row.compression}, expected ${want}`);
  }
  return rows.length ? Number(rows[0].groups) : 0;
}

// `sluice parquet cat file` must print exactly `expected` (internal rows).
export async function CompareCatWithExpected(file, fields, expected) {
  const n = expected.length;
  const lines = await ctx.sluice.Cat(fields, file);
  if (lines.length !== n)
    throw new Error(`sluice parquet cat ${file} printed ${lines.length} rows, expected ${n}`);
  const mm = new Mismatches(file);
  lines.forEach((line, i) => {
    let j;
    try {
      j = ParseJsonLossless(line);
    } catch (e) {
      mm.Add(i, '*', '(a JSON object)', `${e.message}: ${line.slice(0, 200)}`);
      return;
    }
    const keys = j.entries?.map(([k]) => k).join(',');
    if (keys !== fields.map((f) => f.name).join(',')) {
      mm.Add(i, '*', `keys ${fields.map((f) => f.name)}`, `keys ${keys}`);
      return;
    }
    fields.forEach((f, c) => {
      const want = Canon(f.type, expected[i][f.name]);
      let actual;
      try {
        actual = Canon(f.type, FromJson(f.type, j.entries[c][1]));
      } catch (e) {
        actual = `<${e.message}> in ${line.slice(0, 300)}`;
      }
      if (actual !== want) mm.Add(i, f.name, want, actual);
    });
  });
  mm.Check(`sluice parquet cat of ${file}`);
}

// `sluice parquet cat file` must print what DuckDB reads from `file` (n rows).
export async function CompareCatWithDuck(file, fields, n) {
  const duckRows = [];
  await DuckRows(ReadParquetSql(file), (i, row) => {
    duckRows.push(Object.fromEntries(fields.map((f) => [f.name, FromDuck(f.type, row[f.name])])));
  });
  if (duckRows.length !== n) throw new Error(`DuckDB read ${duckRows.length} rows, expected ${n}`);
  await CompareCatWithExpected(file, fields, duckRows);
}
