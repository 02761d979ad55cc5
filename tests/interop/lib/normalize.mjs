// Brings values from DuckDB (node-api values) and from sluice's JSON output
// into the test's internal representation (see values.mjs), checking forms
// strictly: a value printed in the wrong form throws a FormError.
import {ParseDate, ParseDecimal, ParseTime, ParseTimestamp} from './forms.mjs';

export class FormError extends Error {}

// JSON numbers keep their text (64-bit integers must not pass through double);
// objects keep key order and duplicates.
export class JNum {
  constructor(text) {
    this.text = text;
  }
}
export class JObj {
  constructor(entries) {
    this.entries = entries;
  }
}

export function ParseJsonLossless(text) {
  let i = 0;
  const fail = (what) => {
    throw new FormError(`JSON: ${what} at offset ${i}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) ++i;
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{') {
      ++i;
      const entries = [];
      ws();
      if (text[i] === '}') {
        ++i;
        return new JObj(entries);
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const k = str();
        ws();
        if (text[i++] !== ':') fail('expected \':\'');
        entries.push([k, value()]);
        ws();
        if (text[i] === ',') {
          ++i;
          continue;
        }
        if (text[i] === '}') {
          ++i;
          return new JObj(entries);
        }
        fail('expected \',\' or \'}\'');
      }
    }
    if (c === '[') {
      ++i;
      const items = [];
      ws();
      if (text[i] === ']') {
        ++i;
        return items;
      }
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ',') {
          ++i;
          continue;
        }
        if (text[i] === ']') {
          ++i;
          return items;
        }
        fail('expected \',\' or \']\'');
      }
    }
    if (c === '"') return str();
    for (const [lit, v] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return v;
      }
    }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail('unexpected character');
    i += m[0].length;
    return new JNum(m[0]);
  };
  const str = () => {
    const m = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(text.slice(i));
    if (!m) fail('bad string');
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const v = value();
  ws();
  if (i !== text.length) fail('trailing characters');
  return v;
}

const need = (ok, what) => {
  if (!ok) throw new FormError(what);
};

function FloatFromJson(j, isFloat) {
  if (typeof j === 'string') {
    const v = {NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity}[j];
    need(v !== undefined, `expected a number or NaN/Infinity/-Infinity, got "${j}"`);
    return v;
  }
  need(j instanceof JNum, 'expected a number');
  const v = Number(j.text);
  return isFloat ? Math.fround(v) : v;
}

// sluice JSON (from ParseJsonLossless) → internal value of type t.
export function FromJson(t, j) {
  if (j === null) return null;
  const str = (what) => {
    need(typeof j === 'string', `expected a string (${what})`);
    return j;
  };
  const parsed = (v, what) => {
    need(v !== undefined, `"${j}" is not a ${what}`);
    return v;
  };
  switch (t.kind) {
    case 'boolean':
      need(typeof j === 'boolean', 'expected true/false');
      return j;
    case 'int':
      need(j instanceof JNum && /^-?\d+$/.test(j.text), 'expected an integer');
      return Number(j.text);
    case 'long':
      need(j instanceof JNum && /^-?\d+$/.test(j.text), 'expected an integer');
      return BigInt(j.text);
    case 'float':
      return FloatFromJson(j, true);
    case 'double':
      return FloatFromJson(j, false);
    case 'decimal':
      return parsed(ParseDecimal(str('decimal'), t.s), `decimal with ${t.s} fraction digits`);
    case 'date':
      return parsed(ParseDate(str('date')), 'date YYYY-MM-DD');
    case 'time':
      return parsed(ParseTime(str('time')), 'time HH:MM:SS.ffffff');
    case 'timestamp':
      return parsed(ParseTimestamp(str('timestamp'), false, false), 'timestamp');
    case 'timestamptz':
      return parsed(ParseTimestamp(str('timestamptz'), false, true), 'timestamptz (+00:00)');
    case 'timestamp_ns':
      return parsed(ParseTimestamp(str('timestamp_ns'), true, false), 'timestamp_ns');
    case 'timestamptz_ns':
      return parsed(ParseTimestamp(str('timestamptz_ns'), true, true), 'timestamptz_ns');
    case 'string':
      return str('string');
    case 'binary':
    case 'fixed':
      need(/^([0-9a-f]{2})*$/.test(str('hex')), 'expected lowercase hex');
      return j;
    case 'uuid':
      need(
          /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(str('uuid')),
          'expected a canonical uuid');
      return j;
    case 'list':
      need(Array.isArray(j), 'expected an array');
      return j.map((e) => FromJson(t.elem.type, e));
    case 'struct': {
      need(j instanceof JObj, 'expected an object');
      const names = j.entries.map(([k]) => k);
      need(
          names.join(',') === t.fields.map((f) => f.name).join(','),
          `struct keys [${names}] != [${t.fields.map((f) => f.name)}]`);
      const o = {};
      t.fields.forEach((f, i) => {
        o[f.name] = FromJson(f.type, j.entries[i][1]);
      });
      return o;
    }
    case 'map':
      if (t.key.type.kind === 'string') {
        need(j instanceof JObj, 'expected an object (map with string keys)');
        return j.entries.map(([k, v]) => [k, FromJson(t.value.type, v)]);
      }
      need(Array.isArray(j), 'expected an array of {"key","value"} (map)');
      return j.map((e) => {
        need(
            e instanceof JObj && e.entries.length === 2 && e.entries[0][0] === 'key' &&
                e.entries[1][0] === 'value',
            'expected {"key":..,"value":..}');
        return [FromJson(t.key.type, e.entries[0][1]), FromJson(t.value.type, e.entries[1][1])];
      });
  }
  throw new Error(`FromJson: kind ${t.kind}`);
}

// DuckDB node-api value → internal value of type t. For TIMESTAMPTZ_NS DuckDB
// may hand back microseconds (its TIMESTAMPTZ); `lossy` then receives a note and
// the value is returned in ns (µs * 1000).
export function FromDuck(t, v, lossy = null) {
  if (v === null || v === undefined) return null;
  const cls = v?.constructor?.name;
  const expect = (name) => need(cls === name, `DuckDB gave ${cls} for ${t.kind}`);
  switch (t.kind) {
    case 'boolean':
      need(typeof v === 'boolean', `DuckDB gave ${typeof v} for boolean`);
      return v;
    case 'int':
      need(typeof v === 'number', `DuckDB gave ${cls} for int`);
      return v;
    case 'long':  // UINTEGER comes as a number
      need(typeof v === 'bigint' || Number.isSafeInteger(v), `DuckDB gave ${cls} for long`);
      return BigInt(v);
    case 'float':
    case 'double':
      need(typeof v === 'number', `DuckDB gave ${cls}`);
      return v;
    case 'decimal':
      if (typeof v === 'bigint' && t.s === 0) return v;  // UBIGINT read as DECIMAL(20,0)
      expect('DuckDBDecimalValue');
      need(v.scale === t.s, `DuckDB decimal scale ${v.scale} != ${t.s}`);
      return v.value;
    case 'date':
      expect('DuckDBDateValue');
      return v.days;
    case 'time':
      expect('DuckDBTimeValue');
      return v.micros;
    case 'timestamp':
      expect('DuckDBTimestampValue');
      return v.micros;
    case 'timestamptz':
      expect('DuckDBTimestampTZValue');
      return v.micros;
    case 'timestamp_ns':
      expect('DuckDBTimestampNanosecondsValue');
      return v.nanos;
    case 'timestamptz_ns':
      if (cls === 'DuckDBTimestampTZValue') {
        if (lossy) lossy.note = 'DuckDB reads TIMESTAMPTZ_NS as µs TIMESTAMPTZ';
        return v.micros * 1000n;
      }
      expect('DuckDBTimestampNanosecondsValue');
      return v.nanos;
    case 'string':
      need(typeof v === 'string', `DuckDB gave ${cls} for string`);
      return v;
    case 'binary':
    case 'fixed':
      expect('DuckDBBlobValue');
      return Buffer.from(v.bytes).toString('hex');
    case 'uuid':
      expect('DuckDBUUIDValue');
      return v.toString();
    case 'list':
      expect('DuckDBListValue');
      return v.items.map((e) => FromDuck(t.elem.type, e, lossy));
    case 'struct': {
      expect('DuckDBStructValue');
      const o = {};
      for (const f of t.fields) o[f.name] = FromDuck(f.type, v.entries[f.name], lossy);
      return o;
    }
    case 'map':
      expect('DuckDBMapValue');
      return v.entries.map(
          ({key,
            value}) => [FromDuck(t.key.type, key, lossy), FromDuck(t.value.type, value, lossy)]);
  }
  throw new Error(`FromDuck: kind ${t.kind}`);
}

// Truncates ns timestamps of kind timestamptz_ns to µs, toward zero as DuckDB
// does (so -1 ns reads as 0 µs), recursively, to compare with DuckDB's reading.
export function TruncateTzNs(t, v) {
  if (v === null) return null;
  switch (t.kind) {
    case 'timestamptz_ns':
      return (v / 1000n) * 1000n;  // DuckDB truncates toward zero
    case 'list':
      return v.map((e) => TruncateTzNs(t.elem.type, e));
    case 'struct': {
      const o = {};
      for (const f of t.fields) o[f.name] = TruncateTzNs(f.type, v[f.name]);
      return o;
    }
    case 'map':
      return v.map(([k, x]) => [TruncateTzNs(t.key.type, k), TruncateTzNs(t.value.type, x)]);
    default:
      return v;
  }
}
