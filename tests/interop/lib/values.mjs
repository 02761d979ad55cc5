// Random values for a type (internal representation, see forms.mjs; lists are
// arrays, structs objects keyed by field name, maps arrays of [key, value]),
// and their renderings: sluice's JSON input form, DuckDB SQL literals, and a
// canonical string used to compare values from different sources.
import {FormatDate, FormatDecimal, FormatTime, FormatTimestamp, FormatUuid} from './forms.mjs';
import {DuckType} from './types.mjs';

const kMinUs = -62135596800000000n;    // 0001-01-01T00:00:00
const kMaxUs = 253402300799999999n;    // 9999-12-31T23:59:59.999999
const kMinNs = -9223286400000000000n;  // 1677-09-22T00:00:00
const kMaxNs = 9223286399999999999n;   // 2262-04-10T23:59:59.999999999
const kMinDay = -719162;               // 0001-01-01
const kMaxDay = 2932896;               // 9999-12-31
const kFloatMax = Math.fround(3.4028234663852886e38);
const kStrings = [
  '',
  ' ',
  'a',
  'null',
  'NaN',
  '"quoted"',
  'back\\slash',
  'line\nbreak\ttab\r',
  '\u0001\u001f',
  'héllo wörld',
  '中文字符',
  'emoji 😀👍🏽',
  'e\u0301',
  '\u2028\u2029',
  'it\'s',
  '{"json":1}',
  'nul\u0000byte',
];

function RandomDouble(rng) {
  const r = rng.next();
  if (r < 0.25)
    return rng.pick([
      NaN, Infinity, -Infinity, 0, -0, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE,
      -Number.MIN_VALUE, 2.2250738585072014e-308, 0.1, 1e21, 1e-7
    ]);
  if (r < 0.6) {  // any finite bit pattern
    for (;;) {
      const v = rng.bytes(8).readDoubleLE(0);
      if (Number.isFinite(v)) return v;
    }
  }
  return Math.round((rng.next() - 0.5) * 2e6) / 100;
}

function RandomFloat(rng) {
  const r = rng.next();
  if (r < 0.25)
    return rng.pick([
      NaN, Infinity, -Infinity, 0, -0, kFloatMax, -kFloatMax, Math.fround(1.401298464324817e-45),
      Math.fround(1.1754943508222875e-38), Math.fround(0.1), Math.fround(16777217)
    ]);
  if (r < 0.6) {
    for (;;) {
      const v = rng.bytes(4).readFloatLE(0);
      if (Number.isFinite(v)) return v;
    }
  }
  return Math.fround((rng.next() - 0.5) * 1000);
}

function RandomString(rng) {
  const r = rng.next();
  if (r < 0.0005) return 'big'.repeat(rng.int(300000, 500000));  // spans data pages
  if (r < 0.4) return rng.pick(kStrings);
  if (r < 0.5) return 'x'.repeat(rng.int(100, 300)) + rng.pick(kStrings);
  const n = rng.int(1, 12);
  let s = '';
  for (let i = 0; i < n; ++i)
    s += rng.bool(0.8) ? String.fromCharCode(rng.int(0x20, 0x7e)) : rng.pick(kStrings);
  return s;
}

function RandomDecimal(rng, p) {
  const max = 10n ** BigInt(p) - 1n;
  const r = rng.next();
  if (r < 0.25) return rng.pick([max, -max, 0n, 1n, -1n]);
  const digits = rng.int(1, p);
  const v = rng.bigint(0n, 10n ** BigInt(digits) - 1n);
  return rng.bool() ? -v : v;
}

// A random non-null value of type `t`.
export function RandomValue(rng, t) {
  const special = rng.bool(0.2);
  switch (t.kind) {
    case 'boolean':
      return rng.bool();
    case 'int':
      return special ? rng.pick([-2147483648, 2147483647, 0, -1]) :
                       rng.int(-2147483648, 2147483647) >> rng.int(0, 31);
    case 'long':
      return special ? rng.pick([-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n]) :
                       rng.bigint(-(2n ** 63n), 2n ** 63n - 1n) >> BigInt(rng.int(0, 63));
    case 'float':
      return RandomFloat(rng);
    case 'double':
      return RandomDouble(rng);
    case 'decimal':
      return RandomDecimal(rng, t.p);
    case 'date':
      return special ? rng.pick([kMinDay, kMaxDay, 0, -1]) : rng.int(kMinDay, kMaxDay);
    case 'time':
      return special ? rng.pick([0n, 86399999999n]) : rng.bigint(0n, 86399999999n);
    case 'timestamp':
    case 'timestamptz':
      return special ? rng.pick([kMinUs, kMaxUs, 0n, -1n]) : rng.bigint(kMinUs, kMaxUs);
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return special ? rng.pick([kMinNs, kMaxNs, 0n, -1n]) : rng.bigint(kMinNs, kMaxNs);
    case 'string':
      return RandomString(rng);
    case 'binary':
      return rng.bytes(special ? 0 : rng.int(0, 24)).toString('hex');
    case 'fixed':
      return rng.bytes(t.n).toString('hex');
    case 'uuid':
      return FormatUuid(
          special ? Buffer.from(rng.pick(['00', 'ff']).repeat(16), 'hex') : rng.bytes(16));
    case 'list': {
      const n = rng.pick([0, 1, 2, 3, rng.int(0, 8)]);
      return Array.from({length: n}, () => RandomFieldValue(rng, t.elem));
    }
    case 'map': {
      const n = rng.pick([0, 1, 2, rng.int(0, 6)]);
      const seen = new Set();
      const entries = [];
      for (let i = 0; i < n; ++i) {
        const k = RandomValue(rng, t.key.type);
        const c = Canon(t.key.type, k);
        if (seen.has(c)) continue;
        seen.add(c);
        entries.push([k, RandomFieldValue(rng, t.value)]);
      }
      return entries;
    }
    case 'struct': {
      const o = {};
      for (const f of t.fields) o[f.name] = RandomFieldValue(rng, f);
      return o;
    }
  }
  throw new Error(`RandomValue: kind ${t.kind}`);
}

export function RandomFieldValue(rng, f, nullRate = 0.15) {
  if (!f.required && rng.bool(nullRate)) return null;
  return RandomValue(rng, f.type);
}

function FloatText(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  if (Object.is(v, -0)) return '-0.0';
  return String(v);
}

const JsonString = (s) => JSON.stringify(s);

// sluice's JSON input/output form of a value, as JSON text.
export function ToJson(t, v) {
  if (v === null) return 'null';
  switch (t.kind) {
    case 'boolean':
      return v ? 'true' : 'false';
    case 'int':
    case 'long':
      return String(v);
    case 'float':
    case 'double': {
      const s = FloatText(v);
      return Number.isFinite(v) ? s : JsonString(s);
    }
    case 'decimal':
      return JsonString(FormatDecimal(v, t.s));
    case 'date':
      return JsonString(FormatDate(v));
    case 'time':
      return JsonString(FormatTime(v));
    case 'timestamp':
      return JsonString(FormatTimestamp(v, false, false));
    case 'timestamptz':
      return JsonString(FormatTimestamp(v, false, true));
    case 'timestamp_ns':
      return JsonString(FormatTimestamp(v, true, false));
    case 'timestamptz_ns':
      return JsonString(FormatTimestamp(v, true, true));
    case 'string':
    case 'binary':
    case 'fixed':
    case 'uuid':
      return JsonString(v);
    case 'list':
      return `[${v.map((e) => ToJson(t.elem.type, e)).join(',')}]`;
    case 'struct':
      return `{${
          t.fields.map((f) => `${JsonString(f.name)}:${ToJson(f.type, v[f.name])}`).join(',')}}`;
    case 'map':
      if (t.key.type.kind === 'string') {
        return `{${v.map(([k, x]) => `${JsonString(k)}:${ToJson(t.value.type, x)}`).join(',')}}`;
      }
      return `[${
          v.map(([k, x]) => `{"key":${ToJson(t.key.type, k)},"value":${ToJson(t.value.type, x)}}`)
              .join(',')}]`;
  }
  throw new Error(`ToJson: kind ${t.kind}`);
}

export function RowToJson(fields, row) {
  return `{${fields.map((f) => `${JsonString(f.name)}:${ToJson(f.type, row[f.name])}`).join(',')}}`;
}

const SqlString = (s) => `'${s.replaceAll('\'', '\'\'')}'`;

// A DuckDB SQL expression of exactly type DuckType(t) for value v.
export function ToSql(t, v) {
  const cast = (e) => `CAST(${e} AS ${DuckType(t)})`;
  if (v === null) return cast('NULL');
  switch (t.kind) {
    case 'boolean':
      return v ? 'TRUE' : 'FALSE';
    case 'int':
    case 'long':
      return cast(SqlString(String(v)));
    case 'float':
    case 'double':
      return cast(SqlString(FloatText(v)));
    case 'decimal':
      return cast(SqlString(FormatDecimal(v, t.s)));
    case 'date':
      return cast(SqlString(FormatDate(v)));
    case 'time':
      return cast(SqlString(FormatTime(v)));
    case 'timestamp':
      return cast(SqlString(FormatTimestamp(v, false, false, ' ')));
    case 'timestamptz':
      return cast(SqlString(FormatTimestamp(v, false, true, ' ', '+00')));
    case 'timestamp_ns':
      return cast(SqlString(FormatTimestamp(v, true, false, ' ')));
    case 'string':
      return v.split('\0').map(SqlString).join(' || chr(0) || ');  // no NUL in SQL text
    case 'binary':
    case 'fixed':
      return `from_hex('${v}')`;
    case 'uuid':
      return cast(SqlString(v));
    case 'list':
      return cast(`[${v.map((e) => ToSql(t.elem.type, e)).join(', ')}]`);
    case 'struct':
      return cast(
          `{${t.fields.map((f) => `'${f.name}': ${ToSql(f.type, v[f.name])}`).join(', ')}}`);
    case 'map':
      return cast(`MAP {${
          v.map(([k, x]) => `${ToSql(t.key.type, k)}: ${ToSql(t.value.type, x)}`).join(', ')}}`);
  }
  throw new Error(`ToSql: kind ${t.kind}`);
}

// Canonical text of a value, equal for equal values (NaN equals NaN, -0 ≠ 0).
export function Canon(t, v) {
  return ToJson(t, v);
}

// Fast path of Canon(t, a) === Canon(t, b): deep equality of internal values
// (Object.is on leaves, so NaN equals NaN and -0 differs from 0).
export function SameValue(a, b) {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) {
    return Object.is(a, b);
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; ++i) {
      if (!SameValue(a[i], b[i])) return false;
    }
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; ++i) {
    if (ka[i] !== kb[i] || !SameValue(a[ka[i]], b[ka[i]])) return false;
  }
  return true;
}
