// Differential test of sluice's Parquet writer and reader against DuckDB.
//
//   node tests/interop/parquet_differential.mjs [path/to/sluice]
//
// (a) sluice → DuckDB: random schemas and rows are written as JSON lines,
//     `sluice parquet write` turns them into Parquet with each codec, DuckDB's
//     read_parquet must return exactly the generated values, and
//     parquet_schema() must show the field ids sluice assigns (Iceberg order).
//     One case has 1,000,000 rows over several row groups.
// (b) DuckDB → sluice: DuckDB writes the same kind of data with each codec;
//     `sluice parquet cat` must print what DuckDB reads from its own file.
// Env: SLUICE_INTEROP_SEED (reproduce a run), SLUICE_FAKE=1 (DuckDB stands in
// for sluice, to check the harness), SLUICE_INTEROP_BIG_ROWS (default 1000000).
// Prints "N passed, M failed"; exits 1 on any failure.
import {DuckDBInstance} from '@duckdb/node-api';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {CheckReadErrors, CheckWriteErrors} from './lib/error_cases.mjs';
import {FromDuck, FromJson, ParseJsonLossless, TruncateTzNs} from './lib/normalize.mjs';
import {Rng} from './lib/rng.mjs';
import {FakeSluice, RealSluice} from './lib/sluice_cli.mjs';
import {MakePredicates, SequentialFields, SequentialValues, StatsOracle} from './lib/stats_checks.mjs';
import {DuckType, ExpectedParquetElements, ForDuckWriter, kPrimitiveKinds, RandomSchema} from './lib/types.mjs';
import {Canon, RandomFieldValue, RowToJson, SamePrimitive, ToJson, ToSql} from './lib/values.mjs';

const kCodecs = ['uncompressed', 'snappy', 'gzip', 'zstd', 'lz4_raw'];
const kMaxReported = 10;

const seed = Number(process.env.SLUICE_INTEROP_SEED ?? (Date.now() % 2147483647));
const bigRows = Number(process.env.SLUICE_INTEROP_BIG_ROWS ?? 1000000);
console.log(`seed ${seed} (reproduce with SLUICE_INTEROP_SEED=${seed})`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-interop-'));
const conn = await (await DuckDBInstance.create(':memory:', {threads: '2'})).connect();
const fake = process.env.SLUICE_FAKE === '1';
const sluice =
    fake ? new FakeSluice(conn) : new RealSluice(path.resolve(process.argv[2] ?? 'build/sluice'));
console.log(`sluice side: ${sluice.name}; temp dir ${tmp}`);

let lossyNoted = false;
let passed = 0;
let failed = 0;

// Collects mismatches of one case and prints the first few.
class Mismatches {
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
async function AllOf(checks) {
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

async function Case(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    ++passed;
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    ++failed;
    console.log(`FAIL ${name}: ${e.message}`);
  }
}

function GenerateRows(rng, fields, n) {
  const rows = [];
  for (let i = 0; i < n; ++i) {
    const row = {id: BigInt(i)};
    for (const f of fields.slice(1)) row[f.name] = RandomFieldValue(rng, f);
    rows.push(row);
  }
  return rows;
}

function WriteJsonl(file, fields, rows) {
  fs.writeFileSync(file, rows.map((r) => RowToJson(fields, r) + '\n').join(''));
}

// Streams `sql` from DuckDB and calls visit(rowIndex, rowObject) per row.
async function DuckRows(sql, visit) {
  const result = await conn.stream(sql);
  const names = result.columnNames();
  let i = 0;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0;
       chunk = await result.fetchChunk()) {
    for (const row of chunk.getRowObjects(names)) visit(i++, row);
  }
  return i;
}

const ReadParquetSql = (file) => `SELECT * EXCLUDE (file_row_number) FROM read_parquet('${
    file}', file_row_number=true) ORDER BY file_row_number`;

// Compares DuckDB's reading of `file` with `expectedRow(i)`.
// `onRow(i, expected)` (optional) sees every expected row in order.
async function CompareDuckWithExpected(file, fields, expectedRow, n, onRow = null) {
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
      if (actual === null && SamePrimitive(av, ev)) continue;
      actual ??= Canon(f.type, av);
      const expected = Canon(f.type, ev);
      if (actual !== expected) mm.Add(i, f.name, expected, actual);
    }
  });
  if (lossy.note && !lossyNoted)
    console.log(`  note: ${lossy.note}; compared those at µs precision`);
  lossyNoted ||= lossy.note !== null;
  if (count !== n) throw new Error(`DuckDB read ${count} rows from ${file}, expected ${n}`);
  mm.Check(`DuckDB's reading of ${file}`);
}

// parquet_schema(): names, field ids, repetitions and physical types as the
// Iceberg spec maps sluice's types.
async function CheckFieldIds(file, fields) {
  const r = await conn.runAndReadAll(
      `SELECT name, field_id, repetition_type AS rep, type, type_length FROM parquet_schema('${
          file}')`);
  const actual = r.getRowObjects().slice(1);
  const expected = ExpectedParquetElements(fields);
  // DuckDB posing as sluice cannot write REQUIRED columns or FIXED: ids only.
  const fmt = (e) =>
      `${e.name ?? '*'} id=${e.id ?? '-'}` + (fake ? '' : ` ${e.rep} ${e.phys ?? 'group'}`);
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

async function CheckCodec(file, codec) {
  const r = await conn.runAndReadAll(
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

// (a) sluice writes, DuckDB reads.
async function SluiceToDuck(index, codec, n, allow) {
  const rng = new Rng(seed + index * 7919);
  const fields = RandomSchema(rng, {allow, oddName: true});
  const rows = GenerateRows(rng, fields, n);
  const jsonl = path.join(tmp, `a${index}.jsonl`);
  const file = path.join(tmp, `a${index}_${codec}.parquet`);
  WriteJsonl(jsonl, fields, rows);
  await sluice.Write(fields, {codec, stdin: index % 2 === 1}, jsonl, file);
  await AllOf([
    () => CompareDuckWithExpected(file, fields, (i) => rows[i], n),
    () => CheckFieldIds(file, fields),
    async () => {
      if (n > 0) await CheckCodec(file, codec);
    },
    () => CompareCatWithExpected(file, fields, rows),  // sluice reads its own file
    () => sluice.Inspect(fields, file),
  ]);
}

// The 1M-row case: narrower schema, small row groups, rows regenerated on demand.
async function SluiceToDuckBig(codec, n, rowGroupSize) {
  const schemaRng = new Rng(seed ^ 0x5eed);
  const allow = ['int', 'long', 'double', 'decimal', 'string', 'timestamptz', 'date', 'boolean'];
  const fields = [...RandomSchema(schemaRng, {allow, nested: 1}), ...SequentialFields()];
  const nRandom = fields.length - SequentialFields().length;
  const rowAt = (i) => {
    const rng = new Rng((seed * 31 + i) >>> 0);
    const row = {id: BigInt(i)};
    for (const f of fields.slice(1, nRandom)) row[f.name] = RandomFieldValue(rng, f);
    return Object.assign(row, SequentialValues(i));
  };
  const oracle = new StatsOracle(fields, rowGroupSize, MakePredicates(schemaRng, n));
  const jsonl = path.join(tmp, 'big.jsonl');
  const fd = fs.openSync(jsonl, 'w');
  for (let i = 0; i < n; i += 10000) {
    let s = '';
    for (let j = i; j < Math.min(n, i + 10000); ++j) s += RowToJson(fields, rowAt(j)) + '\n';
    fs.writeSync(fd, s);
  }
  fs.closeSync(fd);
  const file = path.join(tmp, `big_${codec}.parquet`);
  const t0 = Date.now();
  await sluice.Write(fields, {codec, rowGroupSize}, jsonl, file);
  console.log(`  wrote ${n} rows in ${Date.now() - t0} ms`);
  fs.rmSync(jsonl);
  const t1 = Date.now();
  await AllOf([
    () => CompareDuckWithExpected(file, fields, rowAt, n, (i, row) => oracle.Visit(i, row)),
    () => oracle.Check(conn, file),
    () => CheckFieldIds(file, fields),
    async () => {
      const groups = await CheckCodec(file, codec);
      const wantGroups = Math.ceil(n / rowGroupSize);
      if (groups !== wantGroups) {
        throw new Error(`${file}: ${groups} row groups, expected ${wantGroups} (--row-group-size ${
            rowGroupSize})`);
      }
    },
  ]);
  console.log(`  verified in ${Date.now() - t1} ms`);
}

// `sluice parquet cat file` must print exactly `expected` (internal rows).
async function CompareCatWithExpected(file, fields, expected) {
  const n = expected.length;
  const lines = await sluice.Cat(fields, file);
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

// (b) DuckDB writes, sluice reads; sluice must print what DuckDB reads.
async function DuckToSluice(index, codec, n, rowGroupSize, version = 'V1') {
  const rng = new Rng(seed + 1000003 + index * 7919);
  const fields = RandomSchema(rng, {
                   allow: kPrimitiveKinds.filter((k) => k !== 'timestamptz_ns' && k !== 'fixed')
                 }).map((f) => ({...f, type: ForDuckWriter(f.type)}));
  const rows = GenerateRows(rng, fields, n);
  const table = `b${index}`;
  await conn.run(`CREATE TABLE ${table} (${
      fields.map((f) => `${f.name} ${DuckType(f.type)}${f.required ? ' NOT NULL' : ''}`)
          .join(', ')})`);
  for (let i = 0; i < n; i += 200) {
    const values = rows.slice(i, i + 200)
                       .map((r) => `(${fields.map((f) => ToSql(f.type, r[f.name])).join(', ')})`);
    await conn.run(`INSERT INTO ${table} VALUES ${values.join(', ')}`);
  }
  const file = path.join(tmp, `b${index}_${codec}.parquet`);
  await conn.run(
      `COPY (SELECT * FROM ${table} ORDER BY id) TO '${file}' (FORMAT parquet, COMPRESSION ${
          codec}, ` +
      `PARQUET_VERSION ${version}${rowGroupSize ? `, ROW_GROUP_SIZE ${rowGroupSize}` : ''})`);
  await conn.run(`DROP TABLE ${table}`);

  // DuckDB's own reading, checked against the generated rows (harness sanity).
  const duckRows = [];
  await DuckRows(ReadParquetSql(file), (i, row) => {
    duckRows.push(Object.fromEntries(fields.map((f) => [f.name, FromDuck(f.type, row[f.name])])));
  });
  const sanity = new Mismatches(file);
  duckRows.forEach((r, i) => fields.forEach((f) => {
    const e = Canon(f.type, rows[i][f.name]), a = Canon(f.type, r[f.name]);
    if (e !== a) sanity.Add(i, f.name, e, a);
  }));
  sanity.Check('DuckDB reading its own file (harness problem, not sluice)');

  await AllOf([
    () => CompareCatWithExpected(file, fields, duckRows),
    () => sluice.Inspect(fields, file),
  ]);

  if (!fake && n >= 5) {  // projection and limit
    const proj =
        await sluice.Cat(fields, file, ['--columns', `${fields[2].name},id`, '--limit', '3']);
    const want = [0, 1, 2].map(
        (i) => `{"${fields[2].name}":${ToJson(fields[2].type, duckRows[i][fields[2].name])},"id":${
            i}}`);
    const got = proj.map((l) => {
      try {
        const j = ParseJsonLossless(l);
        return `{${
            j.entries
                .map(
                    ([k, v]) => `"${k}":${
                        k === 'id' ? v.text : ToJson(fields[2].type, FromJson(fields[2].type, v))}`)
                .join(',')}}`;
      } catch (e) {
        return `<${e.message}> ${l}`;
      }
    });
    if (got.join('\n') !== want.join('\n')) {
      throw new Error(`cat --columns ${fields[2].name},id --limit 3:\n    expected ${
          want.join(' ')}\n    actual   ${got.join(' ')}`);
    }
  }
}

// DuckDB types outside sluice's own set, as DuckDB writes them (INT_8/16,
// UINT_8/16/32/64, TIMESTAMP(MILLIS), ENUM, HUGEINT as DOUBLE): sluice must read
// them as the Iceberg types below and print what DuckDB reads.
async function DuckOtherTypesToSluice(n) {
  const cols = [
    // [name, DuckDB expression over i, sluice type, extremes]
    ['t', 'TINYINT', {kind: 'int'}, ['-128', '127']],
    ['s', 'SMALLINT', {kind: 'int'}, ['-32768', '32767']],
    ['ut', 'UTINYINT', {kind: 'int'}, ['0', '255']],
    ['us', 'USMALLINT', {kind: 'int'}, ['0', '65535']],
    ['ui', 'UINTEGER', {kind: 'long'}, ['0', '4294967295']],
    ['ub', 'UBIGINT', {kind: 'decimal', p: 20, s: 0}, ['0', '18446744073709551615']],
    [
      'tms', 'TIMESTAMP_MS', {kind: 'timestamp'},
      ['\'0001-01-01 00:00:00\'', '\'9999-12-31 23:59:59.999\'']
    ],
    [
      'tsec', 'TIMESTAMP_S', {kind: 'timestamp'},
      ['\'1677-09-22 00:00:00\'', '\'2262-04-10 23:59:59\'']
    ],
    ['m', 'mood', {kind: 'string'}, ['\'sad\'', '\'happy\'']],
    [
      'h', 'HUGEINT', {kind: 'double'},
      ['-170141183460469231731687303715884105728', '170141183460469231731687303715884105727']
    ],
  ];
  const fields = [
    {name: 'id', type: {kind: 'long'}, required: true},
    ...cols.map(([name, , type]) => ({name, type, required: false}))
  ];
  const random = {
    TINYINT: 'H % 256 - 128',
    SMALLINT: 'H % 65536 - 32768',
    UTINYINT: 'H % 256',
    USMALLINT: 'H % 65536',
    UINTEGER: 'H % 4294967296',
    UBIGINT: 'hash(i, $k)',
    TIMESTAMP_MS:
        'TIMESTAMP \'1970-01-01\' + to_milliseconds(H % 400000000000000 - 200000000000000)',
    TIMESTAMP_S: 'TIMESTAMP \'1970-01-01\' + to_seconds(H % 8000000000 - 4000000000)',
    mood: '([\'sad\', \'ok\', \'happy\'])[1 + H % 3]',
    HUGEINT: '(hash(i, $k)::HUGEINT - 9223372036854775808) * 12345',
  };
  const exprs = cols.map(
      ([name, type, , [lo, hi]], k) => `CASE WHEN i = 0 THEN ${lo} WHEN i = 1 THEN ${
                                           hi} WHEN hash(i, ${k + 100}) % 10 = 0 THEN NULL ` +
          `ELSE ${
                                           random[type]
                                               .replaceAll(/\bH\b/g, '(hash(i, $k) >> 1)::BIGINT')
                                               .replaceAll('$k', String(k))} ` +
          `END::${type} AS ${name}`);
  const file = path.join(tmp, 'other_types.parquet');
  await conn.run('CREATE TYPE IF NOT EXISTS mood AS ENUM (\'sad\', \'ok\', \'happy\')')
      .catch(() => {});
  await conn.run(`COPY (SELECT i::BIGINT AS id, ${exprs.join(', ')} FROM range(${n}) t(i)) TO '${
      file}' (FORMAT parquet)`);
  await CompareCatWithDuck(file, fields, n);
}

// `sluice parquet cat file` must print what DuckDB reads from `file` (n rows).
async function CompareCatWithDuck(file, fields, n) {
  const duckRows = [];
  await DuckRows(ReadParquetSql(file), (i, row) => {
    duckRows.push(Object.fromEntries(fields.map((f) => [f.name, FromDuck(f.type, row[f.name])])));
  });
  if (duckRows.length !== n) throw new Error(`DuckDB read ${duckRows.length} rows, expected ${n}`);
  await CompareCatWithExpected(file, fields, duckRows);
}

// sluice writes rows far larger than a data page (long lists, nested lists).
async function SluiceLongListsToDuck(codec) {
  const listOf = (type, required = false) =>
      ({kind: 'list', elem: {name: 'element', type, required}});
  const fields = [
    {name: 'id', type: {kind: 'long'}, required: true},
    {name: 'l', type: listOf({kind: 'int'}, true), required: false},
    {
      name: 'ls',
      required: false,
      type: listOf({
        kind: 'struct',
        fields: [
          {name: 'a', type: {kind: 'string'}, required: false},
          {name: 'b', type: listOf({kind: 'double'}), required: true},
        ]
      })
    },
  ];
  const rows = Array.from(
      {length: 5}, (_, i) => ({
                     id: BigInt(i),
                     l: i === 3 ? null : Array.from({length: i * 120000}, (_, j) => (j * 7919) | 0),
                     ls: Array.from(
                         {length: i * 15000},
                         (_, j) => ({a: j % 4 ? `s${j}` : null, b: j % 3 ? [j / 7, -j] : []})),
                   }));
  const jsonl = path.join(tmp, `long_lists_${codec}.jsonl`);
  const file = path.join(tmp, `long_lists_${codec}.parquet`);
  WriteJsonl(jsonl, fields, rows);
  await sluice.Write(fields, {codec}, jsonl, file);
  await AllOf([
    () => CompareDuckWithExpected(file, fields, (i) => rows[i], rows.length),
    () => CompareCatWithExpected(file, fields, rows),
  ]);
}

// Rows far larger than a page: long lists and lists of structs whose levels
// continue across page boundaries.
async function DuckLongListsToSluice(codec, version) {
  const long = {kind: 'long'};
  const listOf = (type, required = false) =>
      ({kind: 'list', elem: {name: 'element', type, required}});
  const fields = [
    {name: 'id', type: long, required: false},
    {name: 'l', type: listOf(long), required: false},
    {
      name: 'ls',
      required: false,
      type: listOf({
        kind: 'struct',
        fields: [
          {name: 'a', type: {kind: 'string'}, required: false},
          {name: 'b', type: listOf(long), required: false},
        ]
      })
    },
  ];
  const file = path.join(tmp, `long_lists_${codec}_${version}.parquet`);
  await conn.run(
      `COPY (SELECT i::BIGINT AS id, CASE WHEN i = 4 THEN NULL ELSE ` +
      `range(i * 100000, i * 100000 + (i % 3) * 150000)::BIGINT[] END AS l, ` +
      `[{'a': CASE WHEN j % 5 = 0 THEN NULL ELSE 'v' || j END, 'b': [j, NULL]} ` +
      `FOR j IN range(i * 9000)] AS ls FROM range(6) t(i)) TO '${file}' ` +
      `(FORMAT parquet, COMPRESSION ${codec}, PARQUET_VERSION ${version})`);
  await CompareCatWithDuck(file, fields, 6);
}

const missing = sluice.Missing();
if (missing) {
  console.log(`FAIL sluice is not usable: ${missing}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}

const allowA = fake ? kPrimitiveKinds.filter((k) => k !== 'timestamptz_ns') : kPrimitiveKinds;
const sizes = [0, 1, 3000];
let index = 0;
for (const codec of kCodecs) {
  for (const n of sizes) {
    const i = index++;
    await Case(
        `sluice->duckdb ${codec} ${n} rows (case ${i})`, () => SluiceToDuck(i, codec, n, allowA));
  }
}
if (bigRows > 0) {
  const rowGroupSize = Math.ceil(bigRows / 7);
  await Case(
      `sluice->duckdb zstd ${bigRows} rows, --row-group-size ${rowGroupSize}`,
      () => SluiceToDuckBig('zstd', bigRows, rowGroupSize));
}
const bSizes = {
  uncompressed: 0,
  snappy: 1,
  gzip: 3000,
  zstd: 3000,
  lz4_raw: 700
};
index = 0;
for (const codec of kCodecs) {
  const i = index++;
  await Case(
      `duckdb->sluice ${codec} ${bSizes[codec]} rows (case ${i})`,
      () => DuckToSluice(i, codec, bSizes[codec], codec === 'zstd' ? 1000 : 0));
}
// DuckDB's PARQUET_VERSION V2: DATA_PAGE_V2 and DELTA_* / BYTE_STREAM_SPLIT encodings.
for (const codec of ['snappy', 'zstd', 'uncompressed']) {
  const i = index++;
  await Case(
      `duckdb->sluice ${codec} V2 pages 2000 rows (case ${i})`,
      () => DuckToSluice(i, codec, 2000, codec === 'zstd' ? 700 : 0, 'V2'));
}

if (!fake) {
  await Case('duckdb->sluice other DuckDB types 2000 rows', () => DuckOtherTypesToSluice(2000));
  await Case('sluice->duckdb rows larger than pages', () => SluiceLongListsToDuck('gzip'));
  await Case(
      'duckdb->sluice rows larger than pages (V1)', () => DuckLongListsToSluice('snappy', 'V1'));
  await Case(
      'duckdb->sluice rows larger than pages (V2)', () => DuckLongListsToSluice('zstd', 'V2'));
  await Case('sluice parquet write rejects bad input', () => CheckWriteErrors(sluice, tmp));
  await Case(
      'sluice parquet cat fails cleanly on damaged files',
      () => CheckReadErrors(sluice, conn, tmp, new Rng(seed + 77)));
}

console.log(`${passed} passed, ${failed} failed`);
if (failed === 0 && process.env.SLUICE_INTEROP_KEEP !== '1')
  fs.rmSync(tmp, {recursive: true, force: true});
else
  console.log(`files kept in ${tmp}`);
process.exit(failed === 0 ? 0 : 1);
