// The DuckDB side of the Parquet benchmark, single-threaded (SET threads=1).
//   node bench/duckdb_side.mjs write IN.jsonl OUT.parquet [COLUMNS]
//       → JSON lines to zstd Parquet; COLUMNS is read_json's columns struct, by
//       default the events of bench/gen_events.mjs
//   node bench/duckdb_side.mjs read FILE.parquet            → full scan with every value hashed
//   node bench/duckdb_side.mjs tojson FILE.parquet          → full scan printed as JSON lines to
//   /dev/null
//   node bench/duckdb_side.mjs compact OUT.parquet LIST      → the Parquet files named in LIST
//       (one path a line) into one zstd file (what a compaction does)
// Prints the seconds the statement took (DuckDB start-up excluded) and, for
// read, the row count; for compact, the CPU seconds it took.
import {createRequire} from 'node:module';
import path from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../tests/interop/package.json'));
const {DuckDBInstance} = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);

const [mode, a, b, columns] = process.argv.slice(2);
const conn = await (await DuckDBInstance.create(':memory:')).connect();
await conn.run('SET threads=1');
const q = (s) => `'${s.replaceAll('\'', '\'\'')}'`;
const t0 = process.hrtime.bigint();
const cpu0 = process.cpuUsage();  // the process's, DuckDB's threads included
let rows = '';
if (mode === 'write') {
  await conn.run(
      `COPY (SELECT * FROM read_json(${q(a)}, format='newline_delimited', columns=${
          columns ??
          `{id: 'BIGINT', user_id: 'BIGINT', kind: 'VARCHAR', url: 'VARCHAR', amount: 'DOUBLE', ` +
              `ts: 'TIMESTAMPTZ', note: 'VARCHAR'}`})) TO ${q(b)} (FORMAT parquet, COMPRESSION zstd)`);
} else if (mode === 'read') {
  const r = await conn.runAndReadAll(
      `SELECT count(*) AS n, sum(hash(id, user_id, kind, url, amount, ts, note)) AS h ` +
      `FROM read_parquet(${q(a)})`);
  rows = ` ${r.getRowObjects()[0].n}`;
} else if (mode === 'compact') {
  const {readFileSync} = await import('node:fs');
  const files = readFileSync(b, 'utf8').split('\n').filter(Boolean).map(q).join(', ');
  await conn.run(
      `COPY (SELECT * FROM read_parquet([${files}])) TO ${q(a)} (FORMAT parquet, COMPRESSION zstd)`);
  const cpu = process.cpuUsage(cpu0);
  rows = ` ${(cpu.user + cpu.system) / 1e6}`;  // CPU seconds
} else if (mode === 'tojson') {
  await conn.run(`COPY (SELECT * FROM read_parquet(${q(a)})) TO '/dev/null' (FORMAT json)`);
} else {
  console.error('usage: duckdb_side.mjs write IN OUT | read FILE | tojson FILE | compact OUT LIST');
  process.exit(2);
}
console.log(`${Number(process.hrtime.bigint() - t0) / 1e9}${rows}`);
