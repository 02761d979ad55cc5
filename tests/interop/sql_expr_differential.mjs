// Differential test of sluice's SQL expression evaluator against DuckDB.
//
//   node tests/interop/sql_expr_differential.mjs [path/to/sluice]
//
// Seeded random events (NULLs, missing keys, duplicates, zeros, values at the
// int32/int64 limits, empty and padded strings, non-ASCII text, timestamps
// around month and year ends over 15 years) are written as JSON lines into a
// folder; one SQL script reads them with a file source and runs one pipeline
// per error-prone expression (its own table, since a row whose evaluation
// fails goes whole to the dead-letter table) plus one wide pipeline holding
// every expression that can never fail, each as a column of `lake.wide`.
// `sluice run --bounded` runs them to the end of the files; `sluice scan`
// reads every table and its `__dlq`.
//
// The oracle is DuckDB over the same events, with each expression written in
// DuckDB's dialect so that it computes sluice's (PostgreSQL-style) semantics:
// ASCII-only upper/lower, PostgreSQL substring for start <= 0, exact INT /
// BIGINT results computed in a wider type, and for every expression that can
// fail a DuckDB predicate that is TRUE exactly on the rows where sluice must
// raise a row error. Per expression: the rows in the table are exactly the
// rows without an error (that pass the WHERE), each value equals DuckDB's
// (doubles within 1e-12 relative, decimals, integers, dates and timestamps
// exactly, NULLs where DuckDB has NULL), and the dead-letter table holds
// exactly the ids of the error rows, each with a message naming the line of
// the pipeline and a column inside its SELECT. The oracle checks itself too:
// an INT/BIGINT result outside its type's range on a row without an error, or
// a value that does not survive the conversion to the declared type, fails the
// case (the error predicate or the translation is wrong).
//
// Before running, `sluice run --check` is used to find expressions sluice
// cannot bind yet (the error names line and column): those are reported as
// FAIL and left out, so the rest still runs.
//
// Env: SLUICE_INTEROP_SEED (reproduce a run), SLUICE_SQL_EXPR_ROWS (events,
// default 3000), SLUICE_INTEROP_KEEP=1 (keep the temp dir; it is kept anyway on
// failure), SLUICE_FAKE=1 (DuckDB plays sluice: it reads the JSON lines file
// with read_json and writes the tables' scan output and dead letters itself,
// which checks the generator, the oracle and the checking code without
// sluice), SLUICE_FAKE=corrupt (as 1, with a few results spoiled: those cases
// must FAIL, the checker checking itself).
// Prints one PASS/FAIL line per expression and "N passed, M failed"; exits 1
// on any failure.
import {DuckDBInstance} from '@duckdb/node-api';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {FormatDecimal, FormatTimestamp} from './lib/forms.mjs';
import {FormError, ParseJsonLossless} from './lib/normalize.mjs';
import {Rng} from './lib/rng.mjs';
import {FakeSluiceBase, ReadDeadLetters, ReadTable, RealSluice, Results} from './lib/sql_runner.mjs';
import {FromDuckValue, FromSluiceJson, Show, ToSluiceJson, TypeInfo} from './lib/sql_values.mjs';

const seed = Number(process.env.SLUICE_INTEROP_SEED ?? (Date.now() % 2147483647));
console.log(`seed ${seed} (reproduce with SLUICE_INTEROP_SEED=${seed})`);
const kRows = Number(process.env.SLUICE_SQL_EXPR_ROWS ?? 3000);
const fakeMode = process.env.SLUICE_FAKE ?? '';
const fake = fakeMode === '1' || fakeMode === 'corrupt';
const kShown = 3;  // mismatches printed per expression

// ---------------------------------------------------------------------------
// The expressions. Each: sluice SQL, the sluice result type (the table column
// type), the DuckDB expression computing the same value (default: the same
// text), and optionally `err` (DuckDB predicate TRUE exactly on the rows where
// sluice must raise a row error), `where` (sluice WHERE) with `dwhere` (its
// DuckDB translation, default the same text), and `solo` (own pipeline even
// without errors: the expression is about not raising errors, so a wrong
// error must not take the wide table's rows with it). Where the result type is
// not pinned down by the semantics (DECIMAL precision, the type of length() or
// round(INT)), the column is the widest type the value may feed (DECIMAL(38,s),
// BIGINT), so any precision or INT/BIGINT choice binds.

const kAsciiLower = 'abcdefghijklmnopqrstuvwxyz';
const kAsciiUpper = kAsciiLower.toUpperCase();
const DUpper = (x) => `translate(${x}, '${kAsciiLower}', '${kAsciiUpper}')`;
const DLower = (x) => `translate(${x}, '${kAsciiUpper}', '${kAsciiLower}')`;
// PostgreSQL substring(x, st[, len]): the characters at positions
// [st, st + len) that exist; DuckDB counts a start <= 0 from the end instead.
// (DuckDB's greatest() skips NULLs: a NULL start must give NULL.)
const DSubstr = (x, st, len) => `CASE WHEN (${st}) IS NOT NULL THEN ${
    len === undefined ? `substring(${x}, greatest(${st}, 1))` :
                        `substring(${x}, greatest(${st}, 1), greatest((${st}) + (${
                            len}) - greatest(${st}, 1), 0))`} END`;
const OutInt = (e) => `((${e}) NOT BETWEEN -2147483648 AND 2147483647)`;
const OutLong = (e) => `((${e}) NOT BETWEEN -9223372036854775808 AND 9223372036854775807)`;
// A string CAST(... AS INT|BIGINT) accepts: optional spaces, an optional sign,
// decimal digits, optional spaces (PostgreSQL and Flink).
const IntText = (x) => `regexp_full_match(${x}, ' *[+-]?[0-9]+ *')`;
const CastFails = (x, out) => `(${x} IS NOT NULL AND NOT coalesce(${IntText(x)} AND NOT ${
    out(`TRY_CAST(trim(${x}) AS HUGEINT)`)}, false))`;
const kMinInt = '-2147483648';

const C = (sql, type, duck = sql, opts = {}) => ({sql, type, duck, ...opts});

const kCases = [
  // Three-valued logic, comparisons (NULL-heavy: every column is ~10% NULL).
  C('a > b AND flag', 'BOOLEAN'),
  C('a > b OR flag', 'BOOLEAN'),
  C('NOT (a > b)', 'BOOLEAN'),
  C('a = b OR s = t AND NOT flag', 'BOOLEAN'),
  C('(a > 0 OR b > 0) AND NOT (flag OR d > 0)', 'BOOLEAN'),
  C('a IS NULL OR s IS NOT NULL', 'BOOLEAN'),
  C('a < d', 'BOOLEAN'),
  C('m = a', 'BOOLEAN'),
  C('m > 1.5', 'BOOLEAN'),
  C('l >= a', 'BOOLEAN'),
  C('d <> m', 'BOOLEAN'),
  C('s < t', 'BOOLEAN'),
  C('date_trunc(\'day\', ts) = ts', 'BOOLEAN'),
  // IN, NOT IN with NULL, BETWEEN, LIKE.
  C('a IN (1, 2, 3, -1)', 'BOOLEAN'),
  C('a NOT IN (0, 1, NULL)', 'BOOLEAN'),
  C('a IN (0, NULL)', 'BOOLEAN'),
  C('s IN (\'abc\', \'ABC\', \'\')', 'BOOLEAN'),
  C('a BETWEEN -100 AND 100', 'BOOLEAN'),
  C('m BETWEEN -5 AND 5.5', 'BOOLEAN'),
  C('s LIKE \'a%\'', 'BOOLEAN'),
  C('s LIKE \'_b%\'', 'BOOLEAN'),
  C('s NOT LIKE \'%e_\'', 'BOOLEAN'),
  C('t LIKE \'%1%\'', 'BOOLEAN'),
  C('s LIKE \'%\'', 'BOOLEAN'),
  // CASE, COALESCE, NULLIF.
  C('CASE WHEN a > 0 THEN \'pos\' WHEN a < 0 THEN \'neg\' ELSE \'zero or null\' END', 'STRING'),
  C('CASE flag WHEN TRUE THEN 1 WHEN FALSE THEN 0 ELSE -1 END', 'INT'),
  C('CASE b % 3 WHEN 0 THEN \'zero\' WHEN 1 THEN \'one\' END', 'STRING'),
  C('CASE WHEN s = \'\' THEN NULL WHEN length(s) > 3 THEN upper(s) ELSE s END', 'STRING',
    `CASE WHEN s = '' THEN NULL WHEN length(s) > 3 THEN ${DUpper('s')} ELSE s END`),
  C('COALESCE(a, b, -1)', 'INT'),
  C('COALESCE(s, t)', 'STRING'),
  C('NULLIF(a, 0)', 'INT'),
  C('NULLIF(s, \'\')', 'STRING'),
  // Integer arithmetic that cannot overflow; literal types.
  C('a + 2147483648', 'BIGINT', 'a::BIGINT + 2147483648'),
  C('-7 / 2 + a % 3', 'INT', '(-7) // 2 + a % 3'),
  C('a / 7', 'INT', 'a // 7'),
  C('a % -3', 'INT', 'a % -3'),
  C('l / 10', 'BIGINT', 'l // 10'),
  C('l % 10', 'BIGINT'),
  C('CAST(a AS BIGINT) * b', 'BIGINT', 'a::BIGINT * b'),
  // Decimals: exact, scale max(s1,s2) for +/-, s1+s2 for *; / and DOUBLE → DOUBLE.
  C('l + 1.5', 'DECIMAL(38,1)', 'l::DECIMAL(38,0) + 1.5'),
  C('a * 1.5', 'DECIMAL(38,1)', 'a::DECIMAL(38,0) * 1.5'),
  C('m + m', 'DECIMAL(38,2)'),
  C('m - 1.25', 'DECIMAL(38,2)'),
  C('m * m', 'DECIMAL(38,4)', 'm::DECIMAL(38,2) * m'),
  C('m * a', 'DECIMAL(38,2)', 'm::DECIMAL(38,2) * a'),
  C('m * l', 'DECIMAL(38,2)', 'm::DECIMAL(38,2) * l'),
  C('m + 0.005', 'DECIMAL(38,3)'),
  C('m / 3', 'DOUBLE', 'm::DOUBLE / 3'),
  C('m / NULLIF(b, 0)', 'DOUBLE', 'm::DOUBLE / NULLIF(b, 0)::DOUBLE'),
  C('m + d', 'DOUBLE', 'm::DOUBLE + d'),
  C('d * 2 + a', 'DOUBLE'),
  C('a * 2.5e-1', 'DOUBLE', 'a * 0.25::DOUBLE'),
  C('d / 4 - l', 'DOUBLE', 'd / 4 - l::DOUBLE'),
  // Casts that cannot fail.
  C('CAST(a AS STRING)', 'STRING', 'CAST(a AS VARCHAR)'),
  C('CAST(l AS STRING)', 'STRING', 'CAST(l AS VARCHAR)'),
  C('CAST(m AS STRING)', 'STRING', 'CAST(m AS VARCHAR)'),
  C('CAST(flag AS STRING)', 'STRING', 'CAST(flag AS VARCHAR)'),
  C('TRY_CAST(t AS INT)', 'INT',
    `CASE WHEN NOT ${CastFails('t', OutInt)} THEN TRY_CAST(trim(t) AS INT) END`),
  C('CAST(ts AS DATE)', 'DATE'),
  C('CAST(m AS DOUBLE)', 'DOUBLE'),
  C('CAST(m AS INT)', 'INT'),  // half away from zero (DuckDB and PostgreSQL)
  // Strings (lower/upper fold ASCII letters only).
  C('lower(s)', 'STRING', DLower('s')),
  C('upper(s)', 'STRING', DUpper('s')),
  C('length(s)', 'BIGINT'),
  C('substring(s, 2, 3)', 'STRING', DSubstr('s', '2', '3')),
  C('substring(s, 0, 2)', 'STRING', DSubstr('s', '0', '2')),
  C('substring(s, -1, 3)', 'STRING', DSubstr('s', '-1', '3')),
  C('substring(s, 3)', 'STRING', DSubstr('s', '3')),
  C('substring(s, b % 4, 2)', 'STRING', DSubstr('s', 'b % 4', '2')),
  C('trim(s)', 'STRING'),
  C('ltrim(s)', 'STRING'),
  C('rtrim(s)', 'STRING'),
  C('concat(s, \'-\', t, CAST(a AS STRING))', 'STRING', 'concat(s, \'-\', t, CAST(a AS VARCHAR))'),
  C('s || t', 'STRING'),
  C('s || \'!\'', 'STRING'),
  C('starts_with(s, \'ab\')', 'BOOLEAN'),
  C('regexp_matches(s, \'^[a-z]+$\')', 'BOOLEAN'),
  C('regexp_matches(t, \'[0-9]{2}\')', 'BOOLEAN'),
  C('regexp_matches(s, \'é|ü\')', 'BOOLEAN'),
  C('length(trim(upper(s)))', 'BIGINT', `length(trim(${DUpper('s')}))`),
  C('upper(substring(s, 1, 1)) || lower(substring(s, 2))', 'STRING',
    `${DUpper(DSubstr('s', '1', '1'))} || ${DLower(DSubstr('s', '2'))}`),
  // Math (round: half away from zero).
  C('abs(d)', 'DOUBLE'),
  C('abs(m)', 'DECIMAL(38,2)'),
  C('round(d)', 'DOUBLE'),
  C('round(d, 2)', 'DOUBLE'),
  C('round(m)', 'DECIMAL(38,0)'),
  C('round(m, 1)', 'DECIMAL(38,1)'),
  C('round(a)', 'BIGINT', 'a'),
  C('floor(d)', 'DOUBLE'),
  C('ceil(d)', 'DOUBLE'),
  C('floor(m)', 'DECIMAL(38,0)'),
  C('ceil(m)', 'DECIMAL(38,0)'),
  C('ceil(l)', 'BIGINT', 'l'),  // DuckDB's ceil(BIGINT) is a DOUBLE
  // Time (UTC).
  ...['second', 'minute', 'hour', 'day', 'week', 'month', 'year'].map(
      (u) => C(`date_trunc('${u}', ts)`, 'TIMESTAMPTZ')),
  ...['year', 'month', 'day', 'hour', 'minute', 'second', 'dow', 'doy'].map(
      (f) => C(`extract(${f} FROM ts)`, 'BIGINT')),
  C('extract(epoch FROM ts)', 'BIGINT', 'epoch_us(ts) // 1000000'),  // all ts >= 1970
  C('ts + INTERVAL \'5\' SECOND', 'TIMESTAMPTZ'),
  C('ts - INTERVAL \'1\' HOUR', 'TIMESTAMPTZ'),
  C('ts + INTERVAL \'1\' MONTH', 'TIMESTAMPTZ'),
  C('ts - INTERVAL \'1\' MONTH', 'TIMESTAMPTZ'),
  C('ts + INTERVAL \'2\' DAY', 'TIMESTAMPTZ'),
  C('ts + INTERVAL \'90\' MINUTE', 'TIMESTAMPTZ'),
  C('extract(day FROM ts + INTERVAL \'1\' MONTH)', 'BIGINT'),
  C('date_trunc(\'month\', ts) + INTERVAL \'1\' MONTH - INTERVAL \'1\' DAY', 'TIMESTAMPTZ'),
  C('CAST(date_trunc(\'week\', ts) AS DATE)', 'DATE'),

  // Each of these in its own pipeline: overflow, division by zero, failing casts.
  C('a + b', 'INT', 'a::BIGINT + b', {err: OutInt('a::BIGINT + b')}),
  C('a - b', 'INT', 'a::BIGINT - b', {err: OutInt('a::BIGINT - b')}),
  C('a * b', 'INT', 'a::BIGINT * b', {err: OutInt('a::BIGINT * b')}),
  C('a + 2147483647', 'INT', 'a::BIGINT + 2147483647', {err: OutInt('a::BIGINT + 2147483647')}),
  C('(a + b) * 2', 'INT', '(a::BIGINT + b) * 2',
    {err: `${OutInt('a::BIGINT + b')} OR ${OutInt('(a::BIGINT + b) * 2')}`}),
  C('l + a', 'BIGINT', 'l::HUGEINT + a', {err: OutLong('l::HUGEINT + a')}),
  C('l - b', 'BIGINT', 'l::HUGEINT - b', {err: OutLong('l::HUGEINT - b')}),
  C('l * b', 'BIGINT', 'l::HUGEINT * b', {err: OutLong('l::HUGEINT * b')}),
  C('-a', 'INT', '-(a::BIGINT)', {err: `a = ${kMinInt}`}),
  C('abs(a)', 'INT', 'abs(a::BIGINT)', {err: `a = ${kMinInt}`}),
  // NULL / 0 is NULL (the division is never evaluated), not an error.
  C('a / b', 'INT', 'a::BIGINT // b',
    {err: `a IS NOT NULL AND (b = 0 OR (a = ${kMinInt} AND b = -1))`}),
  C('a % b', 'INT', 'a::BIGINT % b', {err: 'a IS NOT NULL AND b = 0'}),
  C('l / b', 'BIGINT', 'l::HUGEINT // b',
    {err: 'l IS NOT NULL AND (b = 0 OR (l = -9223372036854775808 AND b = -1))'}),
  C('l % b', 'BIGINT', 'l::HUGEINT % b', {err: 'l IS NOT NULL AND b = 0'}),
  C('CAST(t AS INT)', 'INT', 'TRY_CAST(trim(t) AS INT)', {err: CastFails('t', OutInt)}),
  C('CAST(t AS BIGINT)', 'BIGINT', 'TRY_CAST(trim(t) AS BIGINT)', {err: CastFails('t', OutLong)}),
  // DuckDB (like PostgreSQL's float8 -> int8) rounds half to even here.
  C('CAST(d AS BIGINT)', 'BIGINT', 'CAST(d AS BIGINT)',
    {err: 'NOT (d >= -9.223372036854775808e18 AND d < 9.223372036854775808e18)'}),
  C('CAST(l AS INT)', 'INT', 'l', {err: OutInt('l')}),
  // Lazy evaluation: branches not taken raise nothing.
  C('CASE WHEN b = 0 THEN NULL ELSE a / b END', 'INT',
    'CASE WHEN b = 0 THEN NULL ELSE a::BIGINT // b END', {err: `a = ${kMinInt} AND b = -1`}),
  C('CASE WHEN flag THEN a + b ELSE -1 END', 'INT', 'CASE WHEN flag THEN a::BIGINT + b ELSE -1 END',
    {err: `flag AND ${OutInt('a::BIGINT + b')}`}),
  C('COALESCE(b, a / b)', 'INT', 'coalesce(b, a // b)', {solo: true}),
  C('COALESCE(a, 100 / b)', 'INT', 'coalesce(a, 100 // b)', {err: 'a IS NULL AND b = 0'}),
  C('CASE WHEN b <> 0 THEN l % b ELSE 0 END', 'BIGINT',
    'CASE WHEN b <> 0 THEN l::HUGEINT % b ELSE 0 END', {solo: true}),
  // WHERE: only TRUE rows; errors in the WHERE and in the SELECT of kept rows.
  C('a - b', 'INT', 'a::BIGINT - b', {where: 'a > b', err: `a > b AND ${OutInt('a::BIGINT - b')}`}),
  C('a / b', 'INT', 'a::BIGINT // b', {
    where: 'a % b = 0',
    dwhere: 'a::BIGINT % NULLIF(b, 0) = 0',
    err: `a IS NOT NULL AND (b = 0 OR (a = ${kMinInt} AND b = -1))`
  }),
  C('a', 'INT', 'a',
    {where: 'a + b > 0', dwhere: 'a::BIGINT + b > 0', err: OutInt('a::BIGINT + b')}),
  C('s', 'STRING', 's', {where: 'NOT (flag AND s LIKE \'a%\')'}),
  C('l', 'BIGINT', 'l', {where: 'a IN (1, 2, 3) OR b NOT IN (0, 1, NULL)'}),
  C('ts', 'TIMESTAMPTZ', 'ts', {where: 'extract(month FROM ts) = 12 AND d BETWEEN -1000 AND 1000'}),
  C('m', 'DECIMAL(38,2)', 'm', {where: 'COALESCE(flag, FALSE) OR m > 100'}),
  C('upper(s)', 'STRING', DUpper('s'), {where: 's LIKE \'%b%\' AND length(s) BETWEEN 2 AND 5'}),
];

// ---------------------------------------------------------------------------
// Events.

const kInt32Min = -2147483648;
const kInt32Max = 2147483647;
const kInt64Min = -(2n ** 63n);
const kInt64Max = 2n ** 63n - 1n;

function GenInt(rng, zeros) {
  const r = rng.next();
  if (r < zeros) return rng.pick([0, 0, -1, -1, 1]);
  if (r < 0.3) return rng.int(-10, 10);
  if (r < 0.45) {
    return rng.pick([
      kInt32Max, kInt32Min, kInt32Max - 1, kInt32Min + 1, 46340, 46341, -46341, 65536, -65536,
      1 << 30, -(1 << 30), 1073741824 + 7, -1073741831
    ]);
  }
  if (r < 0.7) return rng.int(-1000, 1000);
  return rng.int(kInt32Min, kInt32Max);
}

function GenLong(rng) {
  const r = rng.next();
  if (r < 0.2) return BigInt(rng.int(-10, 10));
  if (r < 0.4) {
    return rng.pick([
      0n, -1n, 1n, kInt64Max, kInt64Min, kInt64Max - 1n, kInt64Min + 1n, 2n ** 62n, -(2n ** 62n),
      3037000500n, -3037000500n, 2147483647n, 2147483648n, -2147483648n, -2147483649n,
      4611686018427387904n + 12345n
    ]);
  }
  if (r < 0.6) return rng.bigint(-1000000n, 1000000n);
  if (r < 0.8) return rng.bigint(BigInt(kInt32Min), BigInt(kInt32Max));
  return rng.bigint(kInt64Min, kInt64Max);
}

// Doubles: none with a short non-binary fraction (such as 0.1), so that no
// double equals a DECIMAL(10,2) value only after rounding it to double.
function GenDouble(rng) {
  const r = rng.next();
  if (r < 0.2) return rng.int(-20, 20) / rng.pick([1, 2, 4, 8]);
  if (r < 0.3) {
    return rng.pick([
      0,
      0.5,
      -0.5,
      1.5,
      2.5,
      -2.5,
      3.5,
      1e300,
      -1e300,
      2 ** 63,
      -(2 ** 63),
      2 ** 63 - 1024,
      -(2 ** 63) + 1024,
      1e19,
      -1e19,
      9.2e18,
      2 ** 53,
      5e-324,
      1e-10,
      0.125,
      -0.375
    ]);
  }
  if (r < 0.7) return rng.next() * 2e6 - 1e6;
  if (r < 0.85) return (rng.next() - 0.5) * 10 ** rng.int(-8, 20);
  return rng.int(-1000000, 1000000) + 0.5;
}

// DECIMAL(10,2), as its unscaled value.
function GenDecimal(rng) {
  const r = rng.next();
  if (r < 0.3) return BigInt(rng.int(-1000, 1000));
  if (r < 0.5) {
    return rng.pick(
        [0n, 1n, -1n, 5n, 150n, 250n, -250n, 125n, -125n, 100n, 10000n, 9999999999n, -9999999999n]);
  }
  if (r < 0.6) return BigInt(rng.int(-100, 100)) * 100n;
  return rng.bigint(-9999999999n, 9999999999n);
}

const kStrings = [
  'abc',   'ABC', 'aBc',  '',   ' ',      '  padded  ', ' lead',     'trail ', 'x',   'ab',
  'abx',   'b',   'Bob',  'bb', 'élan',   'über',       'Ünïcode é', 'a_b',    '50%', 'hello world',
  'HELLO', '12',  'a1b2', 'zz', 'abcdef', 'Straße',     'ab é',      'éb',     'be'
];
const kNumberish = [
  '12',
  '-7',
  '0',
  '+3',
  '007',
  '-0',
  '2147483647',
  '-2147483648',
  '2147483648',
  '-2147483649',
  '9223372036854775807',
  '-9223372036854775808',
  '9223372036854775808',
  '99999999999999999999999',
  ' 12',
  '7 ',
  '  -15  ',
  '',
  'abc',
  '1.5',
  '12abc',
  '-',
  '+',
  'x1',
  '1 2',
  '--1',
  '11'
];

function GenString(rng) {
  if (rng.bool(0.6)) return rng.pick(kStrings);
  const alphabet = 'abcdeABCDE xyz019é';
  let s = '';
  for (let n = rng.int(0, 8); n > 0; --n) s += rng.pick([...alphabet]);
  return rng.bool(0.3) ? 'ab' + s : s;
}

function GenNumberish(rng) {
  const r = rng.next();
  if (r < 0.45) return rng.pick(kNumberish);
  if (r < 0.65) return String(rng.int(-1000000, 1000000));
  if (r < 0.8) return String(rng.int(kInt32Min, kInt32Max));
  return GenString(rng);
}

const kDay = 86400n * 1000000n;
const DaysOf = (y, m, d) => BigInt(Date.UTC(y, m - 1, d) / 86400000);

function GenTimestamp(rng) {
  const y = rng.int(2016, 2030);
  const r = rng.next();
  let micros;
  if (r < 0.4) {  // around a month end or a year end
    const m = rng.bool(0.3) ? 12 : rng.int(1, 12);
    const lastDay = new Date(Date.UTC(y, m, 0)).getUTCDate();
    const day = rng.pick([1, lastDay, lastDay, lastDay - 1, 28, 29 <= lastDay ? 29 : 28]);
    const tod = rng.pick([
      0n, kDay - 1n, kDay - 500000n, 12n * 3600n * 1000000n, BigInt(rng.int(0, 86399)) * 1000000n,
      23n * 3600n * 1000000n + 59n * 60000000n
    ]);
    micros = DaysOf(y, m, day) * kDay + tod;
  } else {
    micros = rng.bigint(DaysOf(2016, 1, 1) * kDay, DaysOf(2031, 1, 1) * kDay - 1n);
    if (rng.bool(0.2))
      micros -= micros % 1000000n;
    else if (rng.bool(0.2))
      micros -= micros % 1000n;
  }
  return micros;
}

const kColumns = [
  ['id', 'BIGINT', 'BIGINT'], ['a', 'INT', 'INTEGER'], ['b', 'INT', 'INTEGER'],
  ['l', 'BIGINT', 'BIGINT'], ['d', 'DOUBLE', 'DOUBLE'], ['m', 'DECIMAL(10,2)', 'DECIMAL(10,2)'],
  ['s', 'STRING', 'VARCHAR'], ['t', 'STRING', 'VARCHAR'], ['ts', 'TIMESTAMPTZ', 'TIMESTAMPTZ'],
  ['flag', 'BOOLEAN', 'BOOLEAN']
];

function GenerateEvents(rng, n) {
  const events = [];
  for (let i = 1; i <= n; ++i) {
    const ev = {
      id: BigInt(i),
      a: GenInt(rng, 0.05),
      b: GenInt(rng, 0.2),
      l: GenLong(rng),
      d: GenDouble(rng),
      m: GenDecimal(rng),
      s: GenString(rng),
      t: GenNumberish(rng),
      ts: GenTimestamp(rng),
      flag: rng.bool()
    };
    for (const [c] of kColumns.slice(1)) {
      if (rng.bool(0.1)) ev[c] = rng.bool() ? null : undefined;  // undefined: key left out
    }
    events.push(ev);
  }
  return events;
}

// The JSON line sluice reads for `ev`: keys in random order, now and then an
// unknown key; decimals as numbers or strings; timestamps with 'Z' and 0, 3 or
// 6 fraction digits.
function EventJson(rng, ev) {
  const parts = [];
  for (const [c] of kColumns) {
    const v = ev[c];
    if (v === undefined) continue;
    let text;
    if (v === null) {
      text = 'null';
    } else if (c === 'm') {
      const dec = FormatDecimal(v, 2);
      const r = rng.next();
      // a string, a number, a number without trailing zeros ("12.3", "7")
      text = r < 0.4 ? JSON.stringify(dec) : r < 0.7 ? dec : dec.replace(/\.?0+$/, '');
    } else if (c === 'ts') {
      let iso = FormatTimestamp(v, false, false);
      if (v % 1000000n === 0n && rng.bool(0.7))
        iso = iso.slice(0, -7);
      else if (v % 1000n === 0n && rng.bool(0.7))
        iso = iso.slice(0, -3);
      text = JSON.stringify(iso + 'Z');
    } else if (typeof v === 'string') {
      text = JSON.stringify(v);
    } else {
      text = String(v);  // numbers (shortest round trip), BigInts, booleans
    }
    parts.push(`"${c}":${text}`);
  }
  if (rng.bool(0.05)) parts.push('"unknown_key":{"x":[1,2]}');
  for (let i = parts.length - 1; i > 0; --i) {
    const j = rng.int(0, i);
    [parts[i], parts[j]] = [parts[j], parts[i]];
  }
  return `{${parts.join(',')}}`;
}

function SqlLiteral(c, v) {
  if (v === null || v === undefined) return 'NULL';
  switch (c) {
    case 'd':
      return `'${String(v)}'::DOUBLE`;
    case 'm':
      return `'${FormatDecimal(v, 2)}'::DECIMAL(10,2)`;
    case 's':
    case 't':
      return `'${v.replaceAll('\'', '\'\'')}'`;
    case 'ts':
      return `TIMESTAMPTZ '${FormatTimestamp(v, false, true, ' ')}'`;
    default:
      return String(v);
  }
}

// ---------------------------------------------------------------------------
// Comparing canonical values (lib/sql_values.mjs): doubles within 1e-12
// relative, NaN equal to NaN.

function Same(ti, x, y) {
  if (x === null || y === null) return x === y;
  if (ti.kind === 'double') {
    if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y);
    if (x === y) return true;
    return Math.abs(x - y) <= 1e-12 * Math.max(Math.abs(x), Math.abs(y));
  }
  return x === y;
}

// ---------------------------------------------------------------------------
// The SQL script: tables, the source, one pipeline per line. Columns of
// expressions are in bytes, 1-based, as sluice reports them.

const kWideTable = 'lake.wide';

function BuildScript(cases, inDir) {
  const wide = cases.filter((c) => !c.err && !c.where && !c.solo);
  const solo = cases.filter((c) => c.err || c.where || c.solo);
  const lines = [];
  const tables = [];  // {name, cases: [{c, column}], line, selectCol, endCol}
  if (wide.length) {
    lines.push(`CREATE TABLE ${kWideTable} (id BIGINT, ${
        wide.map((c, i) => `v${i + 1} ${c.type}`).join(', ')});`);
    tables.push({name: kWideTable, cases: wide.map((c, i) => ({c, column: `v${i + 1}`}))});
  }
  for (const c of solo) {
    lines.push(`CREATE TABLE lake.out_${c.k} (id BIGINT, v ${c.type});`);
    tables.push({name: `lake.out_${c.k}`, cases: [{c, column: 'v'}]});
  }
  lines.push(`CREATE SOURCE events (${
      kColumns.map(([n, t]) => `${n} ${t}`).join(', ')}) WITH (connector = 'file', path = '${
      inDir}') FORMAT JSON;`);
  const bytes = (s) => Buffer.byteLength(s);
  for (const tb of tables) {
    const pipe = tb.name === kWideTable ? 'p_wide' : `p_${tb.cases[0].c.k}`;
    let text = `CREATE PIPELINE ${pipe} AS INSERT INTO ${tb.name} `;
    tb.selectCol = bytes(text) + 1;
    text += 'SELECT id';
    for (const item of tb.cases) {
      text += ', ';
      item.start = bytes(text) + 1;
      text += item.c.sql;
      item.end = bytes(text);
    }
    text += ' FROM events';
    if (tb.cases[0].c.where) text += ` WHERE ${tb.cases[0].c.where}`;
    text += ';';
    tb.endCol = bytes(text);
    lines.push(text);
    tb.line = lines.length;
  }
  return {text: lines.join('\n') + '\n', tables};
}

// ---------------------------------------------------------------------------
// DuckDB playing sluice (the real one: lib/sql_runner.mjs).

// DuckDB reads the JSON lines sluice would read and computes the tables and
// their dead letters, using the error predicates to split the rows. With a
// sluice binary (`store`), the results are written with `sluice table create`
// and `sluice append` and read back with `sluice scan`, so the parser reads
// the real scan output; without one, they are printed in its forms directly.
// `corrupt` spoils a few results (the checker must notice).
class FakeSluice extends FakeSluiceBase {
  constructor(conn, linesById, corrupt, store) {
    super(`DuckDB posing as sluice (SLUICE_FAKE=${fakeMode})${
        store ? `, results stored and scanned by ${store.bin}` : ''}`);
    this.conn = conn;
    this.linesById = linesById;
    this.corrupt = corrupt;
    this.store = store;
  }
  async Prepare(tables) {
    if (this.store) this.store.Must(['namespace', 'create', 'lake']);
    for (const [k, tb] of tables.entries()) {
      const c0 = tb.cases[0].c;
      const err = c0.err ? `coalesce((${c0.err}), false)` : 'false';
      const keep = c0.where ? `coalesce((${c0.dwhere ?? c0.where}), false)` : 'true';
      const items = tb.cases.map(({c, column}) => ({ti: TypeInfo(c.type), column, c}));
      const rows = (await (await this.conn.runAndReadAll(`SELECT id, ${
                               items.map(({ti, c}, i) => `CAST((${c.duck}) AS ${ti.duck}) AS x${i}`)
                                   .join(', ')} FROM events_json WHERE NOT ${err} AND ${
                               keep} ORDER BY id DESC`))
                        .getRowObjects());
      const lines = rows.map(
          (row) => `{"id":${row.id},${
              items
                  .map(
                      ({ti, column}, i) =>
                          `"${column}":${ToSluiceJson(ti, FromDuckValue(ti, row[`x${i}`]))}`)
                  .join(',')}}`);
      const errIds =
          (await (await this.conn.runAndReadAll(`SELECT id FROM events_json WHERE ${err}`))
               .getRowObjects())
              .map((r) => r.id);
      const dlq = errIds.map((id, n) => JSON.stringify({
        payload: this.linesById.get(id),
        error: `line ${tb.line}, column ${tb.cases[0].start}: fake row error`,
        source: 'file:fake',
        partition: 'events.jsonl',
        offset: n,
        pipeline: 'fake'
      }));
      if (this.corrupt) this.Spoil(k, tb, lines, dlq);
      this.out.set(tb.name, lines);
      this.out.set(`${tb.name}__dlq`, dlq);
      if (this.store) {
        const schema =
            `id BIGINT, ${tb.cases.map(({c, column}) => `${column} ${c.type}`).join(', ')}`;
        this.Store(tb.name, schema, lines);
        this.Store(
            `${tb.name}__dlq`,
            'payload STRING, error STRING, source STRING, partition STRING, offset BIGINT, ' +
                'pipeline STRING',
            dlq);
      }
    }
  }
  Store(table, schema, lines) {
    this.store.Must(['table', 'create', table, '--schema', schema]);
    if (lines.length === 0) return;
    const file = path.join(tmp, `fake_${table}.jsonl`);
    fs.writeFileSync(file, lines.join('\n') + '\n');
    this.store.Must(['append', table, file]);
  }
  Spoil(k, tb, lines, dlq) {
    if (this.store) throw new Error('SLUICE_FAKE=corrupt runs without a sluice binary');
    const mark = (what) => console.log(`(corrupt: ${tb.name} ${what})`);
    if (tb.name === kWideTable && lines.length > 2) {
      lines[0] = lines[0].replace(/"v1":(true|false|null)/, '"v1":"oops"');
      lines.push(lines[1]);
      const id = ParseJsonLossless(lines[2]).entries[0][1].text;
      lines.splice(2, 1);
      dlq.push(JSON.stringify({
        payload: this.linesById.get(BigInt(id)),
        error: `line ${tb.line}, column ${tb.cases[2].start + 1}: fake row error`
      }));
      mark(`v1 of one row in the wrong form; one row twice; id ${id} a dead letter of v3`);
    } else if (tb.cases[0].c.err && dlq.length > 1 && k % 7 === 1) {
      dlq.pop();
      mark('one dead letter lost');
    } else if (tb.cases[0].c.err && dlq.length && k % 7 === 2) {
      dlq[0] = dlq[0].replace(/line \d+, column \d+: /, '');
      mark('an error message without line and column');
    } else if (k % 7 === 3 && lines.length) {
      lines.splice(0, 1);
      mark('one row lost');
    } else if (k % 7 === 4 && lines.length) {
      lines[0] = lines[0]
                     .replace(/"v":(-?\d+)(?=[,}])/, (_, n) => `"v":${BigInt(n) + 1n}`)
                     .replace(/"v":"(-?)(\d)/, (_, s, d) => `"v":"${s}${(Number(d) + 1) % 10}`);
      mark('one value changed');
    }
  }
  Scan(table) {
    return this.store ? this.store.Scan(table) : super.Scan(table);
  }
}

// ---------------------------------------------------------------------------
// Checking one table against the oracle.

async function Oracle(conn, c) {
  const ti = TypeInfo(c.type);
  const err = c.err ? `coalesce((${c.err}), false)` : 'false';
  const keep = c.where ? `coalesce((${c.dwhere ?? c.where}), false)` : 'true';
  const wrapped = `CAST((${c.duck}) AS ${ti.duck})`;
  const range = ti.kind === 'int' ? ` AND coalesce(NOT ${OutInt(wrapped)}, true)` :
      ti.kind === 'long' ? ` AND coalesce(NOT ${OutLong(wrapped)}, true)` :
                           '';
  const sql = `SELECT id, ${err} AS e, ${keep} AS w,
      CASE WHEN ${err} OR NOT ${keep} THEN NULL ELSE ${wrapped} END AS v,
      CASE WHEN ${err} OR NOT ${keep} THEN true
           ELSE ((${c.duck}) IS NOT DISTINCT FROM ${wrapped})${range} END AS ok
    FROM events ORDER BY id`;
  const rows = (await conn.runAndReadAll(sql)).getRowObjects();
  const expected = new Map();  // id → value, rows in the table
  const errors = new Set();    // ids of dead letters
  const bad = [];
  for (const r of rows) {
    if (r.e) {
      errors.add(r.id);
    } else if (r.w) {
      expected.set(r.id, FromDuckValue(ti, r.v));
      if (!r.ok) bad.push(r.id);
    }
  }
  return {ti, expected, errors, bad};
}

// Where a row error must point: the pipeline's line, a column in its SELECT.
function ErrorProblem(tb, message) {
  const m = /line (\d+), column (\d+)/.exec(message);
  if (!m) return 'names no line and column';
  const line = Number(m[1]);
  const col = Number(m[2]);
  if (line !== tb.line) return `names line ${line}, the pipeline is on line ${tb.line}`;
  if (col < tb.selectCol || col > tb.endCol) {
    return `names column ${col}, outside the SELECT (columns ${tb.selectCol}-${tb.endCol})`;
  }
  return null;
}

// ---------------------------------------------------------------------------
// Main.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-sqlexpr-'));
const inDir = path.join(tmp, 'in');
fs.mkdirSync(inDir);
const conn = await (await DuckDBInstance.create(':memory:', {threads: '2'})).connect();
await conn.run('SET TimeZone = \'UTC\'');

const rng = new Rng(seed);
const events = GenerateEvents(rng, kRows);
const linesById = new Map();
const order = events.map((ev) => ev);
for (let i = order.length - 1; i > 0; --i) {  // the file is not in id order
  const j = rng.int(0, i);
  [order[i], order[j]] = [order[j], order[i]];
}
const fileLines = order.map((ev) => {
  const line = EventJson(rng, ev);
  linesById.set(ev.id, line);
  return line;
});
fs.writeFileSync(path.join(inDir, 'events.jsonl'), fileLines.join('\n') + '\n');

await conn.run(`CREATE TABLE events (${kColumns.map(([n, , d]) => `${n} ${d}`).join(', ')})`);
for (let i = 0; i < events.length; i += 500) {
  await conn.run(`INSERT INTO events VALUES ${
      events.slice(i, i + 500)
          .map((ev) => `(${kColumns.map(([c]) => SqlLiteral(c, ev[c])).join(', ')})`)
          .join(', ')}`);
}
await conn.run(`CREATE VIEW events_json AS SELECT * FROM read_json('${
    path.join(inDir, 'events.jsonl')}', format = 'newline_delimited', columns = {${
    kColumns.map(([n, , d]) => `${n}: '${d}'`).join(', ')}})`);

kCases.forEach((c, i) => {
  c.k = i + 1;
});

const wh = path.join(tmp, 'wh');
const sqlFile = path.join(tmp, 'x.sql');
const bin = path.resolve(process.argv[2] ?? 'build/sluice');
// The fake stores its results through sluice when given a binary that exists.
const store = fake && fakeMode !== 'corrupt' && process.argv[2] && fs.existsSync(bin) ?
    new RealSluice(bin, wh) :
    null;
const sluice =
    fake ? new FakeSluice(conn, linesById, fakeMode === 'corrupt', store) : new RealSluice(bin, wh);
console.log(
    `sluice side: ${sluice.name}; ${kRows} events, ${kCases.length} expressions; temp dir ${tmp}`);

const results = new Results(kShown);
const Report = (name, problems) => results.Report(name, problems);

// The input: DuckDB's read_json of the file equals the generated events
// (checks the JSON writer, independently of sluice).
{
  const diff = (await conn.runAndReadAll(
                    'SELECT count(*)::INT AS n FROM ((SELECT * FROM events EXCEPT ALL SELECT * ' +
                    'FROM events_json) UNION ALL (SELECT * FROM events_json EXCEPT ALL SELECT * ' +
                    'FROM events))'))
                   .getRowObjects()[0]
                   .n;
  Report(
      `input: read_json of ${kRows} JSON lines equals the generated events`,
      diff ? [`${diff} rows differ`] : []);
}

results.StopIfMissing(sluice);

// sluice decodes every event as DuckDB does (`sluice append` uses the JSON
// lines decoder of the sources): a decoding problem would otherwise show up as
// dead letters in every table.
const scanner = fake ? store : sluice;
if (scanner) {
  const problems = [];
  try {
    scanner.Must(['namespace', 'create', 'input']);
    scanner.Must([
      'table', 'create', 'input.events', '--schema',
      kColumns.map(([n, t]) => `${n} ${t}`).join(', ')
    ]);
    scanner.Must(['append', 'input.events', path.join(inDir, 'events.jsonl')]);
    const got = ReadTable(scanner.Scan('input.events'), problems, 'input.events');
    const want = (await conn.runAndReadAll('SELECT * FROM events ORDER BY id')).getRowObjects();
    if (got.size !== want.length) problems.push(`${got.size} rows, want ${want.length}`);
    for (const ev of want) {
      const row = got.get(ev.id);
      if (!row) continue;
      for (const [c, t] of kColumns) {
        const ti = TypeInfo(t);
        const x = FromDuckValue(ti, ev[c]);
        let y;
        try {
          y = FromSluiceJson(ti, row.get(c) ?? null);
        } catch (e) {
          y = `a value in the wrong form (${e.message})`;
        }
        if (!Same(ti, x, y)) {
          problems.push(`id ${ev.id} column ${c}: expected ${Show(ti, x)}, got ${
              typeof y === 'string' ? y : Show(ti, y)}  [input ${linesById.get(ev.id)}]`);
        }
      }
    }
  } catch (e) {
    problems.push(e.message);
  }
  Report('input: sluice append + scan of the events file equals the generated events', problems);
}

// Leave out what sluice cannot bind, one expression at a time.
let active = [...kCases];
let script = BuildScript(active, inDir);
for (let round = 0; round < kCases.length + 1; ++round) {
  fs.writeFileSync(sqlFile, script.text);
  const bad = sluice.Check(sqlFile);
  if (!bad) break;
  // The expression the error points into (or follows, e.g. its WHERE).
  const tb = script.tables.find((t) => t.line === bad.line);
  const item = tb?.cases.findLast((it) => bad.column >= it.start) ??
      (tb && tb.cases.length === 1 ? tb.cases[0] : null);
  if (!item) {
    Report(`sluice run --check ${sqlFile}`, [bad.message]);
    console.log(script.text);
    active = [];
    break;
  }
  Report(
      `${item.c.sql}${item.c.where ? ` WHERE ${item.c.where}` : ''} :: ${item.c.type}`,
      [`does not bind: ${bad.message}`]);
  active = active.filter((c) => c !== item.c);
  if (!active.length) break;
  script = BuildScript(active, inDir);
}

let runError = null;
if (active.length) {
  fs.writeFileSync(sqlFile, script.text);
  try {
    if (fake)
      await sluice.Prepare(script.tables);
    else
      sluice.Run(sqlFile);
  } catch (e) {
    runError = e.message;
    console.log(`sluice run failed: ${runError}`);
  }
}

for (const tb of script.tables) {
  if (!active.length) break;
  const tableProblems = [];
  let rows = new Map();
  let dlq = new Map();
  let unread = runError ? 'sluice run failed (above)' : null;
  if (!unread) {
    try {
      rows = ReadTable(sluice.Scan(tb.name), tableProblems, tb.name);
      dlq = ReadDeadLetters(sluice.Scan(`${tb.name}__dlq`), tableProblems, `${tb.name}__dlq`);
    } catch (e) {
      unread = e.message;
    }
  }
  if (unread) tableProblems.push(unread);
  const wide = tb.name === kWideTable;
  // For the wide table, rows and dead letters are checked once for all its
  // expressions; unexpected dead letters are attributed by their column.
  const blame = new Map();  // case → [messages]
  if (wide) {
    const o = await Oracle(conn, tb.cases[0].c);
    const ids = [...o.expected.keys()];
    const absent = ids.filter((id) => !rows.has(id));
    const extra = [...rows.keys()].filter((id) => !o.expected.has(id));
    for (const [id, {error: msg}] of dlq) {
      const m = /line (\d+), column (\d+)/.exec(msg);
      const col = m && Number(m[1]) === tb.line ? Number(m[2]) : -1;
      const it = tb.cases.find((x) => col >= x.start && col <= x.end);
      const text = `id ${id}: unexpected row error: ${msg}  [input ${linesById.get(id)}]`;
      if (it) {
        if (!blame.has(it.c)) blame.set(it.c, []);
        blame.get(it.c).push(text);
      } else {
        tableProblems.push(text);
      }
    }
    if (absent.length) {
      tableProblems.push(`${absent.length} of ${ids.length} rows missing (${
          dlq.size} dead letters), ids ${absent.slice(0, 10).join(', ')}`);
    }
    if (extra.length) tableProblems.push(`unexpected ids ${extra.slice(0, 10).join(', ')}`);
    Report(`${tb.name}: ${ids.length} rows, no dead letters`, tableProblems);
  }
  for (const item of tb.cases) {
    const c = item.c;
    const problems =
        wide ? [...(blame.get(c) ?? []), ...(unread ? [unread] : [])] : [...tableProblems];
    const o = await Oracle(conn, c);
    for (const id of o.bad.slice(0, kShown)) {
      problems.push(
          `oracle: id ${id} has a value that does not fit ${c.type} but no error (fix the case)`);
    }
    const input = (id) => `  [input ${linesById.get(id)}]`;
    if (!unread) {
      for (const [id, want] of o.expected) {
        const row = rows.get(id);
        if (!row) {
          if (!wide) {
            problems.push(`id ${id}: missing, expected ${Show(o.ti, want)}${
                dlq.has(id) ? ` (dead letter: ${dlq.get(id).error})` : ''}${input(id)}`);
          }
          continue;
        }
        if (!row.has(item.column)) {
          problems.push(`id ${id}: no column ${item.column}`);
          continue;
        }
        let got;
        try {
          got = FromSluiceJson(o.ti, row.get(item.column));
        } catch (e) {
          if (!(e instanceof FormError)) throw e;
          problems.push(
              `id ${id}: value in the wrong form for ${c.type}: ${e.message}${input(id)}`);
          continue;
        }
        if (!Same(o.ti, want, got)) {
          problems.push(
              `id ${id}: expected ${Show(o.ti, want)}, got ${Show(o.ti, got)}${input(id)}`);
        }
      }
      if (!wide) {
        for (const id of rows.keys()) {
          if (!o.expected.has(id)) {
            problems.push(`id ${id}: in the table, expected ${
                o.errors.has(id) ? 'a row error' : 'filtered out by the WHERE'}${input(id)}`);
          }
        }
        for (const id of o.errors) {
          if (!dlq.has(id))
            problems.push(`id ${id}: expected a row error, no dead letter${input(id)}`);
        }
        for (const [id, {error: msg}] of dlq) {
          if (!o.errors.has(id)) {
            problems.push(`id ${id}: unexpected dead letter: ${msg}${input(id)}`);
          } else {
            const p = ErrorProblem(tb, msg);
            if (p) problems.push(`id ${id}: error message ${p}: ${msg}`);
          }
        }
      }
    }
    const nulls = [...o.expected.values()].filter((v) => v === null).length;
    Report(
        `${c.sql}${c.where ? ` WHERE ${c.where}` : ''} :: ${c.type} (${o.expected.size} rows, ${
            nulls} NULL, ${o.errors.size} errors)`,
        problems);
  }
}

results.Finish(tmp, sqlFile);
