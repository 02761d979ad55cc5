// Differential test of sluice's windowed aggregations against DuckDB.
//
//   node tests/interop/sql_window_differential.mjs [path/to/sluice]
//
// Seeded random events (about 20 keys with a few hot ones, NULL keys and
// values, duplicate values, non-ASCII strings, µs timestamps mostly increasing
// with jitter inside the watermark delay, bursts, lulls and gaps, a fraction of
// events tens of seconds late, events just behind the watermark, "anchor"
// events that put the watermark exactly on (or 1 µs before) the closing point
// of a TUMBLE/HOP window or of a key's session followed by events on either
// side of that window's end, events at exactly (or 1 µs around) a key's last
// event + a session gap, and a few NULL event times)
// are written as JSON lines into a few files read in name order (one ordered
// stream). One SQL script reads them through two sources (watermark delays 5 s
// and 1 s) and runs one pipeline per window kind and aggregate mix (TUMBLE,
// HOP and SESSION, both spellings, with and without keys, WHERE, HAVING,
// expressions inside and over aggregates, different allowed lateness), each
// into its own table, plus a plain copy of the source (checks the decoding).
// `sluice run --bounded` runs them to the end of the files; `sluice scan`
// reads every table and its `__dlq`.
//
// The oracle: the lateness semantics are simulated here, row by row, in file
// order (the watermark before a row is the largest non-NULL event time before
// it minus the delay, never decreasing; rows filtered out by the WHERE advance
// it too; a window [start, end) is closed once watermark >= end + lateness; a
// TUMBLE/HOP row is late when all its windows are closed, else it counts in the
// open ones; a SESSION row joins the open sessions of its key overlapping
// [t, t + gap] and is late when the merged session is closed; a closed session
// is emitted and never changes). That gives, per pipeline, each row's windows
// (row id, window_start, window_end) and the late rows. DuckDB joins the
// assignments with the events and computes every aggregate with GROUP BY (and
// the HAVING), which must equal sluice's table exactly: one row per window
// and key, counts, sums, min/max of decimals, strings and timestamps exactly,
// avg within 1e-9 relative, approx_count_distinct exactly when the true count
// is <= 256, else within 6% (4096 registers: standard error 1.6%). The
// dead-letter table must hold exactly the ids of the late rows and of the rows
// with a NULL event time (that pass the WHERE), with errors "late: ..." and
// "... the event time is NULL".
//
// Then a second file of later events (and some for windows already emitted)
// is added and the same script runs again on the same warehouse: it resumes.
// The oracle continues over all rows in order, with the watermark after the
// first run raised to at least the last emitted window's end + lateness (a
// bounded run ends with everything it emitted closed for good): the tables
// must hold the first run's windows unchanged plus only the new ones (none
// twice), the dead letters the late rows of both runs.
//
// Env: SLUICE_INTEROP_SEED (reproduce a run), SLUICE_WINDOW_ROWS (events of
// the first run, default 20000; the second run adds 15% more),
// SLUICE_INTEROP_KEEP=1 (keep the temp dir; it is kept anyway on failure),
// SLUICE_FAKE=1 (the oracle's results play sluice's scans: checks the
// generator, the simulation and the checking code without sluice),
// SLUICE_FAKE=corrupt (as 1, with a few results spoiled: those cases must
// FAIL, the checker checking itself).
// Prints one PASS/FAIL line per pipeline and run (with how many rows were
// judged at a window's exact closing point, HOP rows counted in only some of
// their windows, and rows overlapping an already closed session of their key)
// and "N passed, M failed"; exits 1 on any failure.
import {DuckDBInstance} from '@duckdb/node-api';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {FormatDecimal, FormatTimestamp} from './lib/forms.mjs';
import {FormError} from './lib/normalize.mjs';
import {Rng} from './lib/rng.mjs';
import {FakeSluiceBase, ParseRow, ReadDeadLetters, ReadTable, RealSluice, Results} from './lib/sql_runner.mjs';
import {FromDuckValue, FromSluiceJson, Show, ToSluiceJson, TypeInfo as SqlTypeInfo} from './lib/sql_values.mjs';

const seed = Number(process.env.SLUICE_INTEROP_SEED ?? (Date.now() % 2147483647));
console.log(`seed ${seed} (reproduce with SLUICE_INTEROP_SEED=${seed})`);
const kRows = Number(process.env.SLUICE_WINDOW_ROWS ?? 20000);
const kRows2 = Math.max(1, Math.round(kRows * 0.15));
const fakeMode = process.env.SLUICE_FAKE ?? '';
const fake = fakeMode === '1' || fakeMode === 'corrupt';
const kShown = 5;  // problems printed per case
const t0 = Date.now();

// ---------------------------------------------------------------------------
// Time (µs since the epoch, as safe JS integers).

const kMs = 1000;
const kSec = 1000000;
const kStart = Date.UTC(2024, 2, 5, 10, 0, 0) * kMs;

// ---------------------------------------------------------------------------
// Sources, pipelines. A pipeline: its source, window, allowed lateness, WHERE
// (sluice text; `dwhere` its DuckDB translation, default the same), output
// columns and HAVING. A column: table column name and type, its sluice
// expression and the DuckDB expression computing it over `asg a JOIN ev e
// USING (id)` (a.ws / a.we: the window bounds in µs; ev: the events, ts_us
// the event time in µs), `cmp` (exact, double, approx), `group` (a window
// bound or key: the row's identity).

const kSources = {
  ev: {delay: 5 * kSec},
  ev_tight: {delay: 1 * kSec},
};

const Col = (name, type, sql, duck = sql, cmp = 'exact') => ({name, type, sql, duck, cmp});
const WS = {
  ...Col('window_start', 'TIMESTAMPTZ', 'window_start', 'a.ws'),
  group: true
};
const WE = {
  ...Col('window_end', 'TIMESTAMPTZ', 'window_end', 'a.we'),
  group: true
};
const Key = (c, type = 'STRING') => ({...Col(c, type, c, `e.${c}`), group: true});
const Approx = (name, x) =>
    Col(name, 'BIGINT', `approx_count_distinct(${x})`, `count(DISTINCT ${x})`, 'approx');
const Avg = (name, x) => Col(name, 'DOUBLE', `avg(${x})`, `avg(${x})`, 'double');
const MinTs = Col('min_ts', 'TIMESTAMPTZ', 'min(ts)', 'min(e.ts_us)');
const MaxTs = Col('max_ts', 'TIMESTAMPTZ', 'max(ts)', 'max(e.ts_us)');
const N = Col('n', 'BIGINT', 'count(*)');

const Tumble = (size) => ({kind: 'tumble', size, slide: size});
const Hop = (slide, size) => ({kind: 'hop', size, slide});
const Session = (gap) => ({kind: 'session', gap});

const kPipelines = [
  {
    name: 'tumble_all',
    source: 'ev',
    window: Tumble(10 * kSec),
    from: 'TUMBLE(ev, ts, INTERVAL \'10\' SECOND)',
    lateness: '2s',
    cols: [
      WS, WE, Key('k'), N, Col('nv', 'BIGINT', 'count(v)'),
      Col('nds', 'BIGINT', 'count(DISTINCT s)'), Col('sv', 'BIGINT', 'sum(v)'), Avg('ad', 'd'),
      Col('mnm', 'DECIMAL(10,2)', 'min(m)'), Col('mxm', 'DECIMAL(10,2)', 'max(m)'),
      Col('mns', 'STRING', 'min(s)'), Col('mxs', 'STRING', 'max(s)'), MinTs, MaxTs,
      Approx('acv', 'v'), Col('sm', 'DECIMAL(38,2)', 'sum(m)'), Col('sg', 'BIGINT', 'sum(g)'),
      Col('mng', 'INT', 'min(g)'), Col('mxd', 'DOUBLE', 'max(d)', 'max(d)', 'double')
    ],
  },
  {
    name: 'tumble_flink_where_having',
    source: 'ev',
    window: Tumble(10 * kSec),
    from: 'TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL \'10\' SECONDS))',
    lateness: '0s',
    where: 'v IS NOT NULL AND g < 5',
    cols: [
      WS, WE, Key('k'), Key('g', 'INT'), N, Col('sv', 'BIGINT', 'sum(v)'),
      Col('mns', 'STRING', 'min(s)'), Col('mxd', 'DOUBLE', 'max(d)', 'max(d)', 'double'),
      Approx('acs', 's')
    ],
    having: 'count(*) > 1',
  },
  {
    name: 'hop_k',
    source: 'ev',
    window: Hop(5 * kSec, 20 * kSec),
    from: 'HOP(ev, ts, INTERVAL \'5\' SECOND, INTERVAL \'20\' SECOND)',
    lateness: '2s',
    where: 'NOT (k = \'k1\')',
    cols: [
      WS, WE, Key('k'), N, Col('nv', 'BIGINT', 'count(v)'), Col('sv', 'BIGINT', 'sum(v)'),
      Avg('ad', 'd'), MinTs, MaxTs, Col('mxs', 'STRING', 'max(s)'), Approx('acs', 's'),
      Col('cdg', 'BIGINT', 'count(DISTINCT g)')
    ],
  },
  {
    name: 'hop_global_flink_where',
    source: 'ev_tight',
    window: Hop(10 * kSec, 30 * kSec),
    from:
        'TABLE(HOP(TABLE ev_tight, DESCRIPTOR(ts), INTERVAL \'10\' SECONDS, INTERVAL \'30\' SECONDS))',
    lateness: '1s',
    where: 's LIKE \'a%\' OR d > 0',
    cols: [
      WE, N, Approx('aci', 'id'), Approx('acv', 'v'), Col('cdk', 'BIGINT', 'count(DISTINCT k)'),
      Col('mnm', 'DECIMAL(10,2)', 'min(m)'), Col('mxm', 'DECIMAL(10,2)', 'max(m)'),
      Col('sm', 'DECIMAL(38,2)', 'sum(m)'), Avg('av', 'v')
    ],
  },
  {
    name: 'session_k',
    source: 'ev',
    window: Session(3 * kSec),
    from: 'SESSION(ev, ts, INTERVAL \'3\' SECOND)',
    lateness: '2s',
    cols: [
      WS, WE, Key('k'), N, Col('nv', 'BIGINT', 'count(v)'), Col('sv', 'BIGINT', 'sum(v)'),
      Avg('ad', 'd'), MinTs, MaxTs, Col('nds', 'BIGINT', 'count(DISTINCT s)'),
      Col('mxm', 'DECIMAL(10,2)', 'max(m)'), Approx('acv', 'v')
    ],
  },
  {
    name: 'session_kg_flink_where_having',
    source: 'ev_tight',
    window: Session(1 * kSec),
    from: 'TABLE(SESSION(TABLE ev_tight, DESCRIPTOR(ts), INTERVAL \'1\' SECOND))',
    lateness: '3s',
    where: 'g IS NOT NULL',
    cols: [
      WS, WE, Key('k'), Key('g', 'INT'), N, Col('sv', 'BIGINT', 'sum(v)'),
      Col('mns', 'STRING', 'min(s)'), Col('mxs', 'STRING', 'max(s)')
    ],
    having: 'count(*) >= 3 OR sum(v) > 100',
  },
  {
    name: 'tumble_minute_exprs',
    source: 'ev',
    window: Tumble(60 * kSec),
    from: 'TUMBLE(ev, ts, INTERVAL \'1\' MINUTE)',
    lateness: '10s',
    where: 'extract(second FROM ts) < 50',
    cols: [
      WS, Key('k'), Col('n10', 'BIGINT', 'count(*) * 10'),
      Col('nnull', 'BIGINT', 'count(*) - count(v)'), Col('s2', 'BIGINT', 'sum(v * 2 + 1)'),
      Col('mm', 'DECIMAL(38,2)', 'min(m) + 1.5'), Col('mx', 'STRING', 'max(s || \'!\')'),
      Approx('aci', 'id')
    ],
  },
  {
    name: 'tumble_global',
    source: 'ev_tight',
    window: Tumble(5 * kSec),
    from: 'TUMBLE(ev_tight, ts, INTERVAL \'5\' SECOND)',
    lateness: '0s',
    cols: [
      WS, WE, N, Col('nk', 'BIGINT', 'count(k)'), Approx('ack', 'k'),
      Col('mxk', 'STRING', 'max(k)'), Col('mnk', 'STRING', 'min(k)'), Col('sg', 'BIGINT', 'sum(g)'),
      Avg('av', 'v')
    ],
  },
  {
    name: 'session_global',
    source: 'ev',
    window: Session(2 * kSec),
    from: 'SESSION(ev, ts, INTERVAL \'2\' SECOND)',
    lateness: '1s',
    cols: [
      WS, WE, N, Approx('aci', 'id'), Approx('acv', 'v'), Col('sv', 'BIGINT', 'sum(v)'), MinTs,
      MaxTs
    ],
  },
];

for (const p of kPipelines) {
  p.latenessUs = Number(/^(\d+)s$/.exec(p.lateness)[1]) * kSec;
  p.delay = kSources[p.source].delay;
  p.table = `lake.${p.name}`;
  p.keys = p.cols.filter((c) => c.group && c !== WS && c !== WE);
}

const kColumns = [
  ['id', 'BIGINT', 'BIGINT'], ['k', 'STRING', 'VARCHAR'], ['g', 'INT', 'INTEGER'],
  ['v', 'BIGINT', 'BIGINT'], ['d', 'DOUBLE', 'DOUBLE'], ['m', 'DECIMAL(10,2)', 'DECIMAL(10,2)'],
  ['s', 'STRING', 'VARCHAR'], ['ts', 'TIMESTAMPTZ', 'TIMESTAMPTZ']
];

function BuildScript(pipelines, inDir) {
  const lines = [];
  const colList = kColumns.map(([n, t]) => `${n} ${t}`).join(', ');
  lines.push(`CREATE TABLE lake.raw (${colList});`);
  for (const p of pipelines)
    lines.push(`CREATE TABLE ${p.table} (${p.cols.map((c) => `${c.name} ${c.type}`).join(', ')});`);
  for (const [name, s] of Object.entries(kSources)) {
    lines.push(`CREATE SOURCE ${name} (${colList}, WATERMARK FOR ts AS ts - INTERVAL '${
        s.delay / kSec}' SECOND) WITH (connector = 'file', path = '${inDir}') FORMAT JSON;`);
  }
  lines.push(
      'CREATE PIPELINE p_raw WITH (commit_interval = \'200ms\') AS ' +
      'INSERT INTO lake.raw SELECT * FROM ev;');
  for (const p of pipelines) {
    const group = p.cols.filter((c) => c.group).map((c) => c.sql).join(', ');
    lines.push(`CREATE PIPELINE p_${p.name} WITH (allowed_lateness = '${
        p.lateness}', commit_interval = '200ms') AS INSERT INTO ${p.table} SELECT ${
        p.cols.map((c) => c.sql).join(', ')} FROM ${p.from}${
        p.where ? ` WHERE ${p.where}` :
                  ''} GROUP BY ${group}${p.having ? ` HAVING ${p.having}` : ''};`);
    p.line = lines.length;
  }
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------------------
// Events, in stream order. Ids are 1, 2, ... in that order.

const kHotKeys = ['k0', 'k1', 'k2'];
const kColdKeys = [
  'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9', 'k10', 'k11', 'k12', 'k13', 'k14', 'k15', 'K1', '',
  'ünï', 'it\'s'
];
const kStrings = [
  'a',  'ab', 'abc', 'abd', 'b',      'B',  'Z',    'z',   'zz',          '',     ' ',
  'a ', 'é',  'éa',  'ü',   'Straße', 'aé', 'a\'b', 'x"y', 'hello world', '日本', 'ab\\c'
];

function PickKey(rng) {
  const r = rng.next();
  if (r < 0.03) return null;
  if (r < 0.5) {
    const h = rng.next();
    return h < 0.4 ? kHotKeys[0] : h < 0.75 ? kHotKeys[1] : kHotKeys[2];
  }
  return rng.pick(kColdKeys);
}

function GenValue(rng, c) {
  const nullish = (p) => rng.bool(p) ? (rng.bool(0.7) ? null : undefined) : false;
  const x = nullish(c === 'v' ? 0.1 : 0.08);
  if (x !== false) return x;
  switch (c) {
    case 'g':
      return rng.int(0, 9);
    case 'v': {
      const r = rng.next();
      if (r < 0.5) return rng.int(0, 60);  // duplicates
      if (r < 0.8) return rng.int(-1000000000, 1000000000);
      return rng.int(-1000000000000, 1000000000000);
    }
    case 'd': {  // multiples of 1/64: every sum is exact, in any order
      const r = rng.next();
      if (r < 0.3) return rng.int(-20, 20) / 4;
      return rng.int(-64000, 640000) / 64;
    }
    case 'm': {  // DECIMAL(10,2), unscaled
      const r = rng.next();
      if (r < 0.4) return BigInt(rng.int(-1000, 1000));
      if (r < 0.5) return rng.pick([0n, 1n, -1n, 100n, 9999999999n, -9999999999n]);
      return BigInt(rng.int(-9999999999, 9999999999));
    }
    case 's': {
      if (rng.bool(0.75)) return rng.pick(kStrings);
      let s = rng.bool(0.4) ? 'a' : '';
      for (let n = rng.int(0, 6); n > 0; --n) s += rng.pick([...'abcxyzAZé09 ']);
      return s;
    }
  }
  throw new Error(c);
}

// The generator's state carries over from the first run's events to the
// second's. `maxT` is the largest event time so far (what sets the watermark
// of the 5 s source).
function NewGenState() {
  return {
    base: kStart,
    maxT: null,
    phase: 'normal',
    left: 200,
    queue: [],        // the next events' times (and keys), after an anchor
    last: new Map(),  // key -> its last event time
    id: 0
  };
}

const kMeanGapUs = {
  normal: 30 * kMs,
  burst: 2 * kMs,
  lull: 700 * kMs
};

function NextBase(rng, st) {
  if (--st.left <= 0) {
    const r = rng.next();
    st.phase = r < 0.6 ? 'normal' : r < 0.8 ? 'burst' : 'lull';
    st.left = st.phase === 'normal' ? rng.int(100, 600) :
        st.phase === 'burst'        ? rng.int(50, 400) :
                                      rng.int(10, 60);
    if (rng.bool(0.3)) st.base += rng.int(3500 * kMs, 25 * kSec);  // a gap
  }
  st.base += Math.floor(-Math.log(1 - rng.next()) * kMeanGapUs[st.phase]);
  const r = rng.next();
  if (r < 0.05) {
    st.base = Math.ceil(st.base / kSec) * kSec;  // on a second
  } else if (r < 0.25) {
    st.base = Math.ceil(st.base / kMs) * kMs;
  }
}

// The session pipelines' (gap, lateness, watermark delay), for anchors.
const kSessionProfiles = [
  [3 * kSec, 2 * kSec, 5 * kSec], [1 * kSec, 3 * kSec, 1 * kSec], [2 * kSec, 1 * kSec, 5 * kSec]
];

// The next event's time (null: none) and, now and then, its key and g.
// `replayFrom`: in the second run, a share of events land shortly before the
// end of the first (in windows already emitted).
function NextTime(rng, st, replayFrom) {
  if (st.queue.length) return st.queue.shift();
  NextBase(rng, st);
  const r = rng.next();
  const maxT = st.maxT ?? st.base;
  if (r < 0.003) return {ts: null};
  if (replayFrom !== null && r < 0.04) return {ts: replayFrom - rng.int(0, 25 * kSec)};
  if (r < 0.023) return {ts: st.base - rng.int(10 * kSec, 90 * kSec)};  // really late
  if (r < 0.043) return {ts: maxT - 5 * kSec - rng.int(0, 8 * kSec)};   // behind the watermark
  if (r < 0.047) {
    // An anchor: the 5 s source's watermark becomes exactly E + 2 s (or 1 µs
    // less), the closing point of windows ending at E with a lateness of 2 s;
    // then events on both sides of E.
    const e = Math.ceil((maxT - 7 * kSec) / (10 * kSec)) * 10 * kSec;
    const anchor = e + 7 * kSec - (rng.bool(0.3) ? 1 : 0);
    st.base = Math.max(st.base, anchor);
    for (let n = rng.int(1, 3); n > 0; --n)
      st.queue.push({ts: e + rng.pick([-1, 0, 1, -kSec, -5 * kSec, -2 * kSec - 1])});
    return {ts: anchor};
  }
  if (r < 0.05) {
    // A session anchor: an event of a cold key at T (the latest time), then
    // one of another key putting the watermark exactly at (or 1 µs before) the
    // closing point T + gap + lateness of its session, then the cold key again
    // at T + gap (the session's end: it overlaps) or 1 µs either side.
    const [gap, late, delay] = rng.pick(kSessionProfiles);
    const t = Math.max(maxT, st.base);
    const k = rng.pick(kColdKeys);
    const g = rng.int(0, 9);
    const anchor = t + gap + late + delay - (rng.bool(0.3) ? 1 : 0);
    st.base = Math.max(st.base, anchor);
    st.queue.push({ts: anchor, k: rng.pick(kHotKeys)});
    st.queue.push({ts: t + gap + rng.pick([-1, 0, 0, 1]), k, g});
    return {ts: t, k, g};
  }
  if (r < 0.06 && st.last.size) {
    // A key's event at (or 1 µs around) its last one + a session gap: joins
    // (the bounds are inclusive) or starts a session.
    const k = rng.pick([...st.last.keys()]);
    const [gap] = rng.pick(kSessionProfiles);
    return {ts: st.last.get(k) + gap + rng.pick([-1, 0, 0, 1]), k};
  }
  return {ts: st.base - (rng.bool(0.7) ? 0 : rng.int(0, 4900 * kMs))};
}

function GenerateEvents(rng, st, n, replayFrom = null) {
  const events = [];
  for (let i = 0; i < n; ++i) {
    const next = NextTime(rng, st, replayFrom);
    const ts = next.ts;
    if (ts !== null) st.maxT = st.maxT === null ? ts : Math.max(st.maxT, ts);
    const ev = {id: ++st.id, k: next.k === undefined ? PickKey(rng) : next.k, ts};
    if (ev.k === null && rng.bool(0.3)) ev.k = undefined;  // key left out
    for (const c of ['g', 'v', 'd', 'm', 's']) ev[c] = GenValue(rng, c);
    if (next.g !== undefined) ev.g = next.g;
    if (ts !== null && typeof ev.k === 'string') st.last.set(ev.k, ts);
    events.push(ev);
  }
  return events;
}

// The JSON line sluice reads: keys now and then shuffled, an unknown key;
// decimals as strings or numbers; timestamps with 'Z' or '+00:00' and 6, 3 or
// 0 fraction digits.
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
      text = r < 0.4 ? JSON.stringify(dec) : r < 0.7 ? dec : dec.replace(/\.?0+$/, '');
      if (text === '' || text === '-') text = '0';
    } else if (c === 'ts') {
      let iso = FormatTimestamp(BigInt(v), false, false);
      if (v % kSec === 0 && rng.bool(0.7))
        iso = iso.slice(0, -7);
      else if (v % kMs === 0 && rng.bool(0.7))
        iso = iso.slice(0, -3);
      text = JSON.stringify(iso + (rng.bool(0.8) ? 'Z' : '+00:00'));
    } else if (typeof v === 'string') {
      text = JSON.stringify(v);
    } else {
      text = String(v);
    }
    parts.push(`"${c}":${text}`);
  }
  if (rng.bool(0.03)) parts.push('"unknown_key":{"x":[1,2]}');
  if (rng.bool(0.3)) {
    for (let i = parts.length - 1; i > 0; --i) {
      const j = rng.int(0, i);
      [parts[i], parts[j]] = [parts[j], parts[i]];
    }
  }
  return `{${parts.join(',')}}`;
}

// What DuckDB loads: the same values in plain forms.
function OracleJson(ev) {
  const o = {id: ev.id};
  for (const c of ['k', 'g', 'v', 'd', 's']) o[c] = ev[c] ?? null;
  o.m = ev.m === null || ev.m === undefined ? null : FormatDecimal(ev.m, 2);
  o.ts_us = ev.ts;
  return JSON.stringify(o);
}

// ---------------------------------------------------------------------------
// The oracle's simulation of one pipeline over the rows in stream order.

class Simulation {
  constructor(p, passes) {
    this.p = p;
    this.passes = passes;  // id -> WHERE is TRUE
    this.maxT = null;
    this.wm = null;            // null: none yet (nothing is late)
    this.asg = [];             // [id, ws, we, run]
    this.dlq = new Map();      // id -> 'late' | 'null'
    this.windows = new Set();  // "ws,we,key" of every window with a row
    this.maxEnd = null;
    this.sessions = new Map();        // key -> open sessions [{start, end, ids}]
    this.closedSessions = new Map();  // key -> closed sessions
    this.touchedClosed = [];          // ids of rows whose session is open but overlaps a closed one
    this.partial = 0;                 // HOP rows counted in some of their windows only
    this.edges = 0;  // rows judged with the watermark at a window's end + lateness (or 1 µs less)
  }
  // Whether a window ending at `end` is closed under the watermark `wm`.
  Closed(end, wm) {
    return wm !== null && wm >= end + this.p.latenessUs;
  }
  KeyOf(ev) {
    return JSON.stringify(this.p.keys.map((c) => ev[c.name] ?? null));
  }
  Assign(ev, ws, we, run) {
    this.asg.push([ev.id, ws, we, run]);
    this.windows.add(`${ws},${we},${this.KeyOf(ev)}`);
    this.maxEnd = this.maxEnd === null ? we : Math.max(this.maxEnd, we);
  }
  Row(ev, run) {
    const wm = this.wm;  // the row is judged by the watermark before it
    if (ev.ts !== null) {
      this.maxT = this.maxT === null ? ev.ts : Math.max(this.maxT, ev.ts);
      const w = this.maxT - this.p.delay;
      this.wm = this.wm === null ? w : Math.max(this.wm, w);
    }
    if (!this.passes.get(ev.id)) return;
    if (ev.ts === null) {
      this.dlq.set(ev.id, 'null');
    } else if (this.p.window.kind === 'session') {
      this.SessionRow(ev, run, wm);
    } else {
      this.WindowRow(ev, run, wm);
    }
  }
  WindowRow(ev, run, wm) {
    const {size, slide} = this.p.window;
    const t = ev.ts;
    let counted = 0;
    let all = 0;
    for (let start = Math.floor(t / slide) * slide; start > t - size; start -= slide) {
      ++all;
      const margin = wm === null ? null : wm - (start + size + this.p.latenessUs);
      if (margin === 0 || margin === -1) ++this.edges;
      if (this.Closed(start + size, wm)) continue;
      this.Assign(ev, start, start + size, run);
      ++counted;
    }
    if (counted === 0) this.dlq.set(ev.id, 'late');
    if (counted > 0 && counted < all) ++this.partial;
  }
  SessionRow(ev, run, wm) {
    const gap = this.p.window.gap;
    const key = this.KeyOf(ev);
    const t = ev.ts;
    let open = this.sessions.get(key);
    if (!open) this.sessions.set(key, open = []);
    // Sessions closed at this watermark are emitted: they never change.
    if (open.some(
            (s) => s.end >= t && s.start <= t + gap &&
                [0, -1].includes(wm - (s.end + this.p.latenessUs))))
      ++this.edges;
    const still = [];
    for (const s of open) {
      if (this.Closed(s.end, wm)) {
        if (!this.closedSessions.has(key)) this.closedSessions.set(key, []);
        this.closedSessions.get(key).push(s);
      } else {
        still.push(s);
      }
    }
    const joined = still.filter((s) => s.end >= t && s.start <= t + gap);
    let start = t;
    let end = t + gap;
    for (const s of joined) {
      start = Math.min(start, s.start);
      end = Math.max(end, s.end);
    }
    if (this.Closed(end, wm)) {
      this.dlq.set(ev.id, 'late');
      this.sessions.set(key, still);
      return;
    }
    if ((this.closedSessions.get(key) ?? []).some((s) => s.end >= t && s.start <= t + gap))
      this.touchedClosed.push(ev.id);
    const merged = {start, end, ids: [ev.id], run};
    for (const s of joined) merged.ids.push(...s.ids);
    this.sessions.set(key, [...still.filter((s) => !joined.includes(s)), merged]);
  }
  // The end of a bounded run: every window is emitted, and closed for good.
  EndRun() {
    for (const [key, open] of this.sessions) {
      if (!this.closedSessions.has(key)) this.closedSessions.set(key, []);
      this.closedSessions.get(key).push(...open);
      for (const s of open)
        this.maxEnd = this.maxEnd === null ? s.end : Math.max(this.maxEnd, s.end);
    }
    this.sessions.clear();
    if (this.maxEnd !== null) {
      const w = this.maxEnd + this.p.latenessUs;
      this.wm = this.wm === null ? w : Math.max(this.wm, w);
    }
  }
  // Session assignments are known once the sessions are final.
  SessionAssignments() {
    const out = [];
    for (const list of this.closedSessions.values()) {
      for (const s of list) {
        for (const id of s.ids) out.push([id, s.start, s.end, s.run]);
      }
    }
    return out;
  }
  Assignments() {
    return this.p.window.kind === 'session' ? this.SessionAssignments() : this.asg;
  }
}

// ---------------------------------------------------------------------------
// Values (lib/sql_values.mjs). The oracle computes event times and window
// bounds in µs (ts_us, a.ws, a.we): its TIMESTAMPTZ values are integers.

function TypeInfo(type) {
  return SqlTypeInfo(type, {micros: true});
}

// ---------------------------------------------------------------------------
// The oracle playing sluice (the real one: lib/sql_runner.mjs).

// The oracle's own results, in the forms sluice's scan prints, play sluice
// (`Stage` hands them over after each run); `corrupt` spoils a few.
class FakeSluice extends FakeSluiceBase {
  constructor(corrupt) {
    super(`the oracle posing as sluice (SLUICE_FAKE=${fakeMode})`);
    this.corrupt = corrupt;
  }
  Run() {}
  Stage(run, p, expected, dlq) {
    const lines = [...expected.values()].map(
        (row) =>
            `{${p.cols.map((c, i) => `"${c.name}":${ToSluiceJson(TypeInfo(c.type), row[i])}`)}}`);
    const dead = [...dlq].map(([id, why]) => JSON.stringify({
      payload: linesById.get(id),
      error: why === 'late' ? 'late: fake' : 'the event time is NULL',
      pipeline: `p_${p.name}`
    }));
    if (this.corrupt) {
      const k = kPipelines.indexOf(p) + run;
      const mark = (what) => console.log(`(corrupt: run ${run} ${p.name}: ${what})`);
      if (k % 4 === 0 && lines.length > 1) {
        lines.push(lines[1]);
        mark('one window twice');
      } else if (k % 4 === 1 && dead.length > 1) {
        dead.pop();
        mark('one dead letter lost');
      } else if (k % 4 === 2 && lines.length) {
        lines[0] =
            lines[0].replace(/"n(10)?":(\d+)/, (_, x, n) => `"n${x ?? ''}":${Number(n) + 1}`);
        mark('one count changed');
      } else if (lines.length) {
        lines.splice(0, 1);
        mark('one window lost');
      }
    }
    this.out.set(p.table, lines);
    this.out.set(`${p.table}__dlq`, dead);
  }
}

// ---------------------------------------------------------------------------
// Reading sluice's tables (their lines: lib/sql_runner.mjs) as windows.

const GroupKey = (p, values) => JSON.stringify(
    p.cols.map((c, i) => c.group ? (values[i] === null ? null : String(values[i])) : undefined)
        .filter((x) => x !== undefined));

function ShowGroup(p, values) {
  return p.cols.map((c, i) => c.group ? `${c.name}=${Show(TypeInfo(c.type), values[i])}` : null)
      .filter((x) => x)
      .join(' ');
}

// Window rows: group key -> values (canonical); wrong forms and duplicates
// go to `problems`.
function ReadWindows(p, lines, problems) {
  const rows = new Map();
  for (const line of lines) {
    const row = ParseRow(line, problems, p.table);
    if (!row) continue;
    const values = [];
    let bad = false;
    for (const c of p.cols) {
      if (!row.has(c.name)) {
        problems.push(`${p.table}: no column ${c.name} in ${line.slice(0, 200)}`);
        bad = true;
        break;
      }
      try {
        values.push(FromSluiceJson(TypeInfo(c.type), row.get(c.name)));
      } catch (e) {
        if (!(e instanceof FormError)) throw e;
        problems.push(
            `${p.table}: ${c.name} in the wrong form (${e.message}): ${line.slice(0, 200)}`);
        bad = true;
        break;
      }
    }
    if (bad) continue;
    const key = GroupKey(p, values);
    if (rows.has(key))
      problems.push(`window ${ShowGroup(p, values)} emitted twice`);
    else
      rows.set(key, values);
  }
  return rows;
}

// ---------------------------------------------------------------------------
// Main.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-window-'));
const inDir = path.join(tmp, 'in');
fs.mkdirSync(inDir);
const wh = path.join(tmp, 'wh');
const sqlFile = path.join(tmp, 'x.sql');
const bin = path.resolve(process.argv[2] ?? 'build/sluice');
const sluice = fake ? new FakeSluice(fakeMode === 'corrupt') : new RealSluice(bin, wh);
const conn = await (await DuckDBInstance.create(':memory:', {threads: '2'})).connect();
await conn.run('SET TimeZone = \'UTC\'');

const rng = new Rng(seed);
const gen = NewGenState();
const events1 = GenerateEvents(rng, gen, kRows);
const maxT1 = gen.maxT;
const events2 = GenerateEvents(rng, gen, kRows2, maxT1);
const allEvents = [...events1, ...events2];
const linesById = new Map();
const eventsById = new Map();
for (const ev of allEvents) {
  linesById.set(ev.id, EventJson(rng, ev));
  eventsById.set(ev.id, ev);
}

// The first run's events in three files (split at random rows), the second's
// in one more, all read in name order.
const cuts = [0, rng.int(1, kRows - 1), rng.int(1, kRows - 1), kRows].sort((a, b) => a - b);
const WriteEvents = (name, evs) =>
    fs.writeFileSync(path.join(inDir, name), evs.map((ev) => linesById.get(ev.id) + '\n').join(''));
for (let f = 0; f < 3; ++f) WriteEvents(`part-00${f}.jsonl`, events1.slice(cuts[f], cuts[f + 1]));

const oracleFile = path.join(tmp, 'oracle.jsonl');
fs.writeFileSync(oracleFile, allEvents.map((ev) => OracleJson(ev) + '\n').join(''));
await conn.run(
    `CREATE TABLE ev AS SELECT *, make_timestamp(ts_us)::TIMESTAMPTZ AS ts FROM read_json('${
        oracleFile}', format = 'newline_delimited', columns = {id: 'BIGINT', k: 'VARCHAR', g: 'INTEGER', ` +
    `v: 'BIGINT', d: 'DOUBLE', m: 'DECIMAL(10,2)', s: 'VARCHAR', ts_us: 'BIGINT'})`);

console.log(`sluice side: ${sluice.name}; ${kRows} + ${kRows2} events, ${
    kPipelines.length} windowed pipelines; temp dir ${tmp}`);

const results = new Results(kShown);
const Report = (name, problems) => results.Report(name, problems);

// The oracle checks itself: DuckDB loaded the generated events.
{
  const r =
      (await conn.runAndReadAll(
           'SELECT count(*) AS n, count(ts) AS nts, sum(v) AS sv, count(DISTINCT k) AS nk FROM ev'))
          .getRowObjects()[0];
  const want = {
    n: allEvents.length,
    nts: allEvents.filter((e) => e.ts !== null).length,
    sv: allEvents.reduce((a, e) => a + BigInt(e.v ?? 0), 0n),
    nk: new Set(allEvents.map((e) => e.k).filter((k) => k !== null && k !== undefined)).size
  };
  const problems = [];
  for (const [k, v] of Object.entries(want)) {
    if (String(r[k]) !== String(v)) problems.push(`${k}: DuckDB ${r[k]}, generated ${v}`);
  }
  Report(`oracle input: DuckDB holds the ${allEvents.length} generated events`, problems);
}

results.StopIfMissing(sluice);

// WHERE per pipeline, by DuckDB: id -> TRUE.
for (const p of kPipelines) {
  p.passes = new Map();
  const cond = p.where ? `coalesce((${p.dwhere ?? p.where}), false)` : 'true';
  for (const r of (await conn.runAndReadAll(`SELECT id, ${cond} AS w FROM ev`)).getRowObjects())
    p.passes.set(Number(r.id), r.w);
}

// Leave out pipelines sluice cannot bind, one at a time.
let active = [...kPipelines];
let script = BuildScript(active, inDir);
for (;;) {
  fs.writeFileSync(sqlFile, script);
  const bad = sluice.Check(sqlFile);
  if (!bad) break;
  const p = active.find((x) => x.line === bad.line);
  if (!p) {
    Report(`sluice run --check ${sqlFile}`, [bad.message]);
    active = [];
    break;
  }
  Report(`${p.name} (both runs)`, [`does not bind: ${bad.message}`]);
  active = active.filter((x) => x !== p);
  script = BuildScript(active, inDir);
}

// The oracle: simulate every pipeline over the first run's rows, then the
// second's.
const sims = new Map();
for (const p of active) {
  const sim = new Simulation(p, p.passes);
  for (const ev of events1) sim.Row(ev, 1);
  sim.EndRun();
  p.dlq1 = new Map(sim.dlq);
  p.stats1 = {partial: sim.partial, edges: sim.edges, touched: sim.touchedClosed.length};
  for (const ev of events2) sim.Row(ev, 2);
  sim.EndRun();
  sims.set(p, sim);
  const asgFile = path.join(tmp, `asg_${p.name}.csv`);
  fs.writeFileSync(
      asgFile, 'id,ws,we,run\n' + sim.Assignments().map((a) => a.join(',') + '\n').join(''));
  await conn.run(`CREATE TABLE asg_${p.name} AS SELECT * FROM read_csv('${
      asgFile}', header = true, columns = {'id': 'BIGINT', 'ws': 'BIGINT', 'we': 'BIGINT', 'run': 'INTEGER'})`);
}

// Expected window rows of `p` after run `run`: group key -> values.
async function Expected(p, run) {
  const group = ['a.ws', 'a.we', ...p.keys.map((c) => c.duck)].join(', ');
  const sql = `SELECT ${
      p.cols.map((c, i) => `CAST((${c.duck}) AS ${TypeInfo(c.type).duck}) AS c${i}`)
          .join(', ')} FROM asg_${p.name} a JOIN ev e USING (id) WHERE a.run <= ${run} GROUP BY ${
      group}${p.having ? ` HAVING ${p.dhaving ?? p.having}` : ''}`;
  const out = new Map();
  for (const r of (await conn.runAndReadAll(sql)).getRowObjects()) {
    const values = p.cols.map((c, i) => FromDuckValue(TypeInfo(c.type), r[`c${i}`]));
    const key = GroupKey(p, values);
    if (out.has(key)) throw new Error(`oracle: ${p.name}: group ${key} twice`);
    out.set(key, values);
  }
  return out;
}

const input = (id) => `  [input ${linesById.get(id)}]`;
const hll = {
  values: 0,
  maxErr: 0
};

// Problems in window order (ISO times sort): a window missing and the one
// sluice made instead come out together.
function Compare(p, expected, got, out) {
  const problems = [];
  for (const [key, want] of expected) {
    const row = got.get(key);
    if (!row) {
      problems.push(`window ${ShowGroup(p, want)}: missing (expected ${
          p.cols.filter((c) => !c.group)
              .map((c) => `${c.name}=${Show(TypeInfo(c.type), want[p.cols.indexOf(c)])}`)
              .join(' ')})`);
      continue;
    }
    p.cols.forEach((c, i) => {
      if (c.group) return;
      const ti = TypeInfo(c.type);
      const x = want[i];
      const y = row[i];
      let ok;
      if (x === null || y === null) {
        ok = x === y;
      } else if (c.cmp === 'double') {
        ok = x === y || Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
      } else if (c.cmp === 'approx') {
        if (x <= 256n) {
          ok = x === y;
        } else {
          const err = Math.abs(Number(y - x)) / Number(x);
          ++hll.values;
          hll.maxErr = Math.max(hll.maxErr, err);
          ok = err <= 0.06;
        }
      } else {
        ok = x === y;
      }
      if (!ok) {
        problems.push(`window ${ShowGroup(p, want)}: ${c.name} = ${c.sql}: expected ${Show(ti, x)}${
            c.cmp === 'approx' && x > 256n ? ' (±6%)' : ''}, got ${Show(ti, y)}`);
      }
    });
  }
  for (const [key, row] of got) {
    if (!expected.has(key)) {
      problems.push(`window ${ShowGroup(p, row)}: unexpected (${
          p.cols.filter((c) => !c.group)
              .map((c) => `${c.name}=${Show(TypeInfo(c.type), row[p.cols.indexOf(c)])}`)
              .join(' ')})`);
    }
  }
  out.push(...problems.sort());
}

function CompareDeadLetters(p, want, got, problems) {
  for (const [id, why] of want) {
    if (!got.has(id)) {
      problems.push(`id ${id}: expected a dead letter (${
          why === 'late' ? 'late' : 'NULL event time'})${input(id)}`);
      continue;
    }
    const {error, payload} = got.get(id);
    if (why === 'late' ? !error.startsWith('late:') : !error.includes('the event time is NULL'))
      problems.push(`id ${id}: dead letter's error ${JSON.stringify(error)}, expected ${why}`);
    // The record as it came: the columns the pipeline does not decode too.
    if (payload !== linesById.get(id)) {
      problems.push(`id ${id}: dead letter's payload is not the record as it came: ${
          JSON.stringify(payload)}${input(id)}`);
    }
  }
  for (const [id, {error}] of got) {
    if (!want.has(id)) problems.push(`id ${id}: unexpected dead letter: ${error}${input(id)}`);
  }
}

// Column `c` of a generated event, canonical.
function Generated(ev, c, ti) {
  const x = ev[c] ?? null;
  return x !== null && ['int', 'long', 'timestamptz'].includes(ti.kind) ? BigInt(x) : x;
}

// The first column of `row` (sluice JSON, a Map) that differs from the
// generated event, as a message; null when they are equal.
function RowProblem(ev, row) {
  if (!row) return 'not a JSON object';
  for (const [c, t] of kColumns) {
    const ti = TypeInfo(t);
    const x = Generated(ev, c, ti);
    let y;
    try {
      y = FromSluiceJson(ti, row.get(c) ?? null);
    } catch (e) {
      if (!(e instanceof FormError)) throw e;
      return `column ${c} in the wrong form (${e.message})${input(ev.id)}`;
    }
    if (x !== y) return `column ${c}: expected ${Show(ti, x)}, got ${Show(ti, y)}${input(ev.id)}`;
  }
  return null;
}

// The plain copy: every row as generated (checks sluice's decoding).
function CheckRaw(run, events) {
  const problems = [];
  const rows = ReadTable(sluice.Scan('lake.raw'), problems, 'lake.raw', Number);
  if (rows.size !== events.length) problems.push(`${rows.size} rows, expected ${events.length}`);
  for (const ev of events) {
    const row = rows.get(ev.id);
    if (!row) {
      problems.push(`id ${ev.id}: missing${input(ev.id)}`);
      continue;
    }
    const bad = RowProblem(ev, row);
    if (bad) problems.push(`id ${ev.id}: ${bad}`);
  }
  Report(`run ${run}: lake.raw holds the ${events.length} events as generated`, problems);
}

async function CheckRun(run) {
  if (!fake) CheckRaw(run, run === 1 ? events1 : allEvents);
  for (const p of active) {
    const sim = sims.get(p);
    const expected = await Expected(p, run);
    const wantDlq = run === 1 ? p.dlq1 : sim.dlq;
    if (fake) sluice.Stage(run, p, expected, wantDlq);
    const problems = [];
    let got = new Map();
    let dlq = new Map();
    try {
      got = ReadWindows(p, sluice.Scan(p.table), problems);
      dlq = ReadDeadLetters(sluice.Scan(`${p.table}__dlq`), problems, `${p.table}__dlq`, Number);
    } catch (e) {
      problems.push(e.message);
    }
    if (run === 2 && p.run1) {  // the first run's windows are still there, unchanged
      for (const [key, values] of p.run1) {
        const now = got.get(key);
        if (!now ||
            JSON.stringify(now, (k, v) => typeof v === 'bigint' ? String(v) : v) !==
                JSON.stringify(values, (k, v) => typeof v === 'bigint' ? String(v) : v))
          problems.push(`window ${ShowGroup(p, values)} of run 1 ${now ? 'changed' : 'gone'}`);
      }
    }
    Compare(p, expected, got, problems);
    CompareDeadLetters(p, wantDlq, dlq, problems);
    if (run === 1) p.run1 = got;
    const late = [...wantDlq.values()].filter((w) => w === 'late').length;
    const st = run === 1 ?
        p.stats1 :
        {partial: sim.partial, edges: sim.edges, touched: sim.touchedClosed.length};
    const notes = [`${st.edges} rows at a window's closing point`];
    if (p.window.kind === 'hop') notes.push(`${st.partial} rows in some of their windows only`);
    if (st.touched) {
      const ids = sim.touchedClosed.slice(0, st.touched);
      notes.push(
          `${st.touched} rows overlap an already closed session of their key, which must ` +
          `stay as emitted (ids ${ids.slice(0, 4).join(', ')}${ids.length > 4 ? ', ...' : ''})`);
    }
    Report(
        `run ${run}: ${p.name}: ${expected.size} windows, ${late} late, ${
            wantDlq.size - late} NULL event times; ${notes.join('; ')}`,
        problems);
  }
}

let runFailed = null;
for (const run of [1, 2]) {
  if (!active.length) break;
  if (run === 2) WriteEvents('part-100.jsonl', events2);
  try {
    sluice.Run(sqlFile);
  } catch (e) {
    runFailed = e.message;
    Report(`run ${run}: sluice run --bounded`, [e.message]);
    break;
  }
  await CheckRun(run);
}
if (hll.values) {
  console.log(`approx_count_distinct over 256 distinct values: ${
      hll.values} windows, largest error ${(hll.maxErr * 100).toFixed(2)}%`);
}

results.Finish(tmp, sqlFile, ` (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
