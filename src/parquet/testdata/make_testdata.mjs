// Regenerates duck_v1.parquet and duck_v2.parquet with DuckDB (@duckdb/node-api from
// tests/interop/node_modules):  node src/parquet/testdata/make_testdata.mjs src/parquet/testdata
// reader_test.cc checks the rows against the formulas below.
import { DuckDBInstance } from '../../../tests/interop/node_modules/@duckdb/node-api/lib/index.js';
const out = process.argv[2];
const inst = await DuckDBInstance.create(':memory:');
const c = await inst.connect();
await c.run("SET TimeZone='UTC'");
const sel = `SELECT i::BIGINT AS id,
  CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37 % 1000)::INTEGER END AS small,
  (i * 1000003)::BIGINT * (CASE WHEN i % 2 = 0 THEN -1 ELSE 1 END) AS big,
  (i / 3.0)::DOUBLE AS dbl, (i * 0.25)::FLOAT AS flt,
  CASE WHEN i % 5 = 0 THEN NULL ELSE 'name-' || (i % 50)::VARCHAR || repeat('x', i % 13) END AS str,
  (i * 12.34)::DECIMAL(9,2) AS dec9, (i * 1234567.891)::DECIMAL(18,3) AS dec18, (i * 98765432109876.5432)::DECIMAL(38,4) AS dec38,
  DATE '2020-01-01' + (i % 1000)::INTEGER AS d,
  TIMESTAMP '2021-06-01 00:00:00' + to_microseconds(i * 1234567) AS ts,
  (TIMESTAMP '2021-06-01 00:00:00' + to_microseconds(i * 1234567))::TIMESTAMP_MS AS ts_ms,
  (TIMESTAMP '2021-06-01 00:00:00' + to_microseconds(i * 1234567))::TIMESTAMP_NS AS ts_ns,
  (TIMESTAMPTZ '2021-06-01 00:00:00+00' + to_microseconds(i * 7)) AS tstz,
  TIME '00:00:00' + to_microseconds((i * 1000001) % 86400000000) AS t,
  (i % 250)::UTINYINT AS u8, (i * 100000)::UINTEGER AS u32, (i::UBIGINT * 4000000000000000)::UBIGINT AS u64,
  i % 3 = 0 AS flag,
  CASE WHEN i % 4 = 0 THEN NULL ELSE list_transform(range(i % 5), x -> x + i) END AS ints,
  CASE WHEN i % 6 = 0 THEN NULL ELSE list_transform(range(i % 3), x -> CASE WHEN x = 1 THEN NULL ELSE 's' || (x + i)::VARCHAR END) END AS strs,
  CASE WHEN i % 9 = 0 THEN NULL ELSE {'a': i, 'b': CASE WHEN i % 2 = 0 THEN NULL ELSE 'b' || i::VARCHAR END, 'c': {'d': i * 2}} END AS st,
  CASE WHEN i % 8 = 0 THEN NULL ELSE MAP(list_transform(range(i % 4), x -> 'k' || x::VARCHAR), list_transform(range(i % 4), x -> CASE WHEN x = 2 THEN NULL ELSE x * i END)) END AS m,
  list_transform(range(i % 3), x -> list_transform(range(x), y -> y + i)) AS nested,
  CASE WHEN i % 10 = 0 THEN NULL ELSE list_transform(range(i % 3), x -> {'p': x, 'q': 'q' || x::VARCHAR}) END AS structs,
  uuid_extract_version(gen_random_uuid()) AS dummy
FROM range(3000) t(i)`;
await c.run(`CREATE TABLE t AS ${sel}`);
await c.run(`ALTER TABLE t DROP COLUMN dummy`);
await c.run(`COPY (SELECT * FROM t WHERE id < 1000) TO '${out}/duck_v1.parquet' (FORMAT parquet, COMPRESSION lz4_raw, ROW_GROUP_SIZE 400)`);
await c.run(`COPY t TO '${out}/duck_v2.parquet' (FORMAT parquet, COMPRESSION zstd, PARQUET_VERSION v2, ROW_GROUP_SIZE 2048)`);
const r = await c.runAndReadAll(`SELECT path_in_schema, encodings, compression FROM parquet_metadata('${out}/duck_v2.parquet') WHERE row_group_id = 0`);
console.log(JSON.stringify(r.getRowObjectsJson()));
