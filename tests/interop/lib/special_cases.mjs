// Directed cases beside the random ones: DuckDB-only types, rows larger than
// a data page in both directions. Use lib/harness.mjs (InitHarness first).
import path from 'node:path';

import {AllOf, CompareCatWithDuck, CompareCatWithExpected, CompareDuckWithExpected, ctx, WriteJsonl} from './harness.mjs';

// DuckDB types outside sluice's own set, as DuckDB writes them (INT_8/16,
// UINT_8/16/32/64, TIMESTAMP(MILLIS), ENUM, HUGEINT as DOUBLE): sluice must read
// them as the Iceberg types below and print what DuckDB reads.
export async function DuckOtherTypesToSluice(n) {
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
  const file = path.join(ctx.tmp, 'other_types.parquet');
  await ctx.conn.run('CREATE TYPE IF NOT EXISTS mood AS ENUM (\'sad\', \'ok\', \'happy\')')
      .catch(() => {});
  await ctx.conn.run(`COPY (SELECT i::BIGINT AS id, ${exprs.join(', ')} FROM range(${
      n}) t(i)) TO '${file}' (FORMAT parquet)`);
  await CompareCatWithDuck(file, fields, n);
}

// sluice writes rows far larger than a data page (long lists, nested lists).
export async function SluiceLongListsToDuck(codec) {
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
  const jsonl = path.join(ctx.tmp, `long_lists_${codec}.jsonl`);
  const file = path.join(ctx.tmp, `long_lists_${codec}.parquet`);
  WriteJsonl(jsonl, fields, rows);
  await ctx.sluice.Write(fields, {codec}, jsonl, file);
  await AllOf([
    () => CompareDuckWithExpected(file, fields, (i) => rows[i], rows.length),
    () => CompareCatWithExpected(file, fields, rows),
  ]);
}

// Rows far larger than a page: long lists and lists of structs whose levels
// continue across page boundaries.
export async function DuckLongListsToSluice(codec, version) {
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
  const file = path.join(ctx.tmp, `long_lists_${codec}_${version}.parquet`);
  await ctx.conn.run(
      `COPY (SELECT i::BIGINT AS id, CASE WHEN i = 4 THEN NULL ELSE ` +
      `range(i * 100000, i * 100000 + (i % 3) * 150000)::BIGINT[] END AS l, ` +
      `[{'a': CASE WHEN j % 5 = 0 THEN NULL ELSE 'v' || j END, 'b': [j, NULL]} ` +
      `FOR j IN range(i * 9000)] AS ls FROM range(6) t(i)) TO '${file}' ` +
      `(FORMAT parquet, COMPRESSION ${codec}, PARQUET_VERSION ${version})`);
  await CompareCatWithDuck(file, fields, 6);
}
