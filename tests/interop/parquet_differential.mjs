// Differential test of sluice's Parquet writer and reader against DuckDB.
//
//   node tests/interop/parquet_differential.mjs [path/to/sluice]
//
// (a) sluice → DuckDB: random schemas and rows are written as JSON lines,
//     `sluice parquet write` turns them into Parquet with each codec, DuckDB's
//     read_parquet must return exactly the generated values, and
//     parquet_schema() must show the field ids sluice assigns (Iceberg order),
//     repetitions and physical types. One case has 300,000 rows over several
//     row groups, whose statistics are checked too (lib/stats_checks.mjs).
// (b) DuckDB → sluice: DuckDB writes the same kind of data with each codec
//     (and V2 pages); `sluice parquet cat` must print what DuckDB reads.
// Plus directed cases (lib/special_cases.mjs) and bad input (lib/error_cases.mjs).
// Env: SLUICE_INTEROP_SEED (reproduce a run), SLUICE_FAKE=1 (DuckDB stands in
// for sluice, to check the harness), SLUICE_INTEROP_BIG_ROWS (default 300000 in seven
// row groups; 1000000, the size until 2026-12-06, took 84 s of CI's 11 minutes),
// SLUICE_INTEROP_KEEP=1 (keep the temp dir).
// Prints "N passed, M failed"; exits 1 on any failure.
import {DuckDBInstance} from '@duckdb/node-api';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {CheckReadErrors, CheckWriteErrors} from './lib/error_cases.mjs';
import {AllOf, CheckCodec, CheckFieldIds, CompareCatWithExpected, CompareDuckWithExpected, DuckRows, GenerateRows, InitHarness, Mismatches, ReadParquetSql, WriteJsonl} from './lib/harness.mjs';
import {FromDuck, FromJson, ParseJsonLossless} from './lib/normalize.mjs';
import {Rng} from './lib/rng.mjs';
import {FakeSluice, RealSluice} from './lib/sluice_cli.mjs';
import {DuckLongListsToSluice, DuckOtherTypesToSluice, SluiceLongListsToDuck} from './lib/special_cases.mjs';
import {MakePredicates, SequentialFields, SequentialValues, StatsOracle} from './lib/stats_checks.mjs';
import {DuckType, ForDuckWriter, kPrimitiveKinds, RandomSchema} from './lib/types.mjs';
import {Canon, RandomFieldValue, RowToJson, ToJson, ToSql} from './lib/values.mjs';

const kCodecs = ['uncompressed', 'snappy', 'gzip', 'zstd', 'lz4_raw'];

const seed = Number(process.env.SLUICE_INTEROP_SEED ?? (Date.now() % 2147483647));
const bigRows = Number(process.env.SLUICE_INTEROP_BIG_ROWS ?? 300000);
console.log(`seed ${seed} (reproduce with SLUICE_INTEROP_SEED=${seed})`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-interop-'));
const conn = await (await DuckDBInstance.create(':memory:', {threads: '2'})).connect();
const fake = process.env.SLUICE_FAKE === '1';
const sluice =
    fake ? new FakeSluice(conn) : new RealSluice(path.resolve(process.argv[2] ?? 'build/sluice'));
console.log(`sluice side: ${sluice.name}; temp dir ${tmp}`);
InitHarness({conn, sluice, fake, tmp});

let passed = 0;
let failed = 0;

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
