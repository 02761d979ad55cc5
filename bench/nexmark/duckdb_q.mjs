// The DuckDB side of the Nexmark benchmark (bench/nexmark/nexmark.sh), one thread.
//   node bench/nexmark/duckdb_q.mjs run Q BIDS.jsonl OUT.parquet
//       runs Nexmark query Q (q0 q1 q2 q5 q7) over the bids, written with
//       COPY (...) TO OUT.parquet (FORMAT parquet, COMPRESSION zstd); prints
//       "<rows> <statement wall seconds> <statement CPU seconds>" (the CPU of the whole
//       process during the statement, start-up excluded). nexmark.sh also times the
//       whole process with /usr/bin/time.
//   node bench/nexmark/duckdb_q.mjs check Q FILES.txt OUT.parquet
//       compares sluice's result (the Parquet data files listed in FILES.txt, one a
//       line) with DuckDB's: prints "<sluice rows> <duckdb rows> same|DIFFERENT", an
//       order-independent fingerprint (sum of row hashes) deciding same/different.
import {createRequire} from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../tests/interop/package.json'));
const {DuckDBInstance} = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);

const [mode, query, a, b] = process.argv.slice(2);
const conn = await (await DuckDBInstance.create(':memory:')).connect();
await conn.run('SET threads = 1');
await conn.run(`SET TimeZone = 'UTC'`);
const q = (s) => `'${s.replaceAll('\'', '\'\'')}'`;

const kColumns = `{auction: 'BIGINT', bidder: 'BIGINT', price: 'BIGINT', channel: 'VARCHAR', ` +
    `url: 'VARCHAR', date_time: 'TIMESTAMPTZ', extra: 'VARCHAR'}`;
// The same queries as the sluice pipelines, in DuckDB's SQL. HOP(bid, date_time, 2 s,
// 10 s): the windows [s, s + 10 s) holding an event at t start at the multiples s of
// 2 s with t - 10 s < s <= t, i.e. from time_bucket(2 s, t) - 8 s to time_bucket(2 s, t).
const kQueries = {
  q0: (bid) => `SELECT auction, bidder, price, date_time, extra FROM ${bid}`,
  q1: (bid) => `SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM ${bid}`,
  q2: (bid) => `SELECT auction, price FROM ${bid} WHERE auction % 123 = 0`,
  q5: (bid) => `SELECT auction, count(*) AS num, window_start,
      window_start + INTERVAL 10 SECOND AS window_end
    FROM (SELECT auction, unnest(generate_series(
            time_bucket(INTERVAL 2 SECOND, date_time) - INTERVAL 8 SECOND,
            time_bucket(INTERVAL 2 SECOND, date_time), INTERVAL 2 SECOND)) AS window_start
          FROM ${bid})
    GROUP BY auction, window_start`,
  q7: (bid) => `SELECT time_bucket(INTERVAL 10 SECOND, date_time) AS window_start,
      time_bucket(INTERVAL 10 SECOND, date_time) + INTERVAL 10 SECOND AS window_end,
      max(price) AS max_price
    FROM ${bid} GROUP BY 1, 2`,
};
// Per query, the row fingerprint: each column in a form both files share.
const kRowKey = {
  q0: 'auction, bidder, price, epoch_us(date_time), extra',
  q1: 'auction, bidder, CAST(price AS DECIMAL(38,3)), epoch_us(date_time), extra',
  q2: 'auction, price',
  q5: 'auction, num, epoch_us(window_start), epoch_us(window_end)',
  q7: 'epoch_us(window_start), epoch_us(window_end), max_price',
};
if (!kQueries[query] || (mode !== 'run' && mode !== 'check') || !a || !b) {
  console.error('usage: duckdb_q.mjs run Q BIDS.jsonl OUT.parquet | check Q FILES.txt OUT.parquet');
  process.exit(2);
}

if (mode === 'run') {
  const bid = `read_json(${q(a)}, format='newline_delimited', columns=${kColumns})`;
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const r = await conn.runAndReadAll(
      `COPY (${kQueries[query](bid)}) TO ${q(b)} (FORMAT parquet, COMPRESSION zstd)`);
  const cpu = process.cpuUsage(cpu0);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(`${r.getRows()[0][0]} ${seconds} ${(cpu.user + cpu.system) / 1e6}`);
} else {
  const files = fs.readFileSync(a, 'utf8').split('\n').filter((l) => l !== '');
  const fingerprint = async (from) => {
    const r = await conn.runAndReadAll(
        `SELECT count(*)::VARCHAR AS n, coalesce(sum(hash(${kRowKey[query]})), 0)::VARCHAR AS h ` +
        `FROM ${from}`);
    return r.getRowObjects()[0];
  };
  const ours = files.length === 0 ? {n: '0', h: '0'} :
                                    await fingerprint(`read_parquet([${files.map(q).join(', ')}])`);
  const theirs = await fingerprint(`read_parquet(${q(b)})`);
  console.log(`${ours.n} ${theirs.n} ${ours.n === theirs.n && ours.h === theirs.h ? 'same' : 'DIFFERENT'}`);
}
