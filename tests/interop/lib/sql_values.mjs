// Values of the SQL differential tests (sql_expr_differential.mjs,
// sql_window_differential.mjs): a sluice SQL column type, the DuckDB values an
// oracle computes for it and the JSON `sluice scan` prints for it, brought to
// one canonical form (BigInt for INT, BIGINT and timestamps (µs since the
// epoch), number for DOUBLE, BigInt unscaled for DECIMAL, days for DATE,
// strings, booleans), printed back in sluice's forms and shown in messages.
import {FormatDate, FormatDecimal, FormatTimestamp} from './forms.mjs';
import {FormError, FromDuck, FromJson} from './normalize.mjs';

const kIntRange = [-(2n ** 31n), 2n ** 31n - 1n];
const kLongRange = [-(2n ** 63n), 2n ** 63n - 1n];

// A sluice SQL type → {kind (as in normalize.mjs), s (a DECIMAL's scale), duck:
// the DuckDB type the oracle casts its value to}. Integers are cast to HUGEINT
// (a result outside INT/BIGINT shows as such); `micros`: the oracle computes
// TIMESTAMPTZ values as µs since the epoch (HUGEINT), not as DuckDB TIMESTAMPTZ.
export function TypeInfo(type, {micros = false} = {}) {
  const m = /^DECIMAL\((\d+),(\d+)\)$/.exec(type);
  if (m) {
    const s = Number(m[2]);
    return {kind: 'decimal', s, duck: `DECIMAL(38,${s})`};
  }
  const t = {
    INT: {kind: 'int', duck: 'HUGEINT'},
    BIGINT: {kind: 'long', duck: 'HUGEINT'},
    DOUBLE: {kind: 'double', duck: 'DOUBLE'},
    STRING: {kind: 'string', duck: 'VARCHAR'},
    BOOLEAN: {kind: 'boolean', duck: 'BOOLEAN'},
    TIMESTAMPTZ: {kind: 'timestamptz', duck: micros ? 'HUGEINT' : 'TIMESTAMPTZ'},
    DATE: {kind: 'date', duck: 'DATE'},
  }[type];
  if (!t) throw new Error(`no type info for ${type}`);
  return t;
}

// DuckDB value of type `ti.duck` (or of a narrower column) → canonical value.
export function FromDuckValue(ti, v) {
  if (v === null || v === undefined) return null;
  if (ti.duck === 'HUGEINT') return BigInt(v);  // integers, µs timestamps
  return FromDuck(ti, v);
}

// sluice JSON value → canonical value (throws FormError on a wrong form).
export function FromSluiceJson(ti, j) {
  if (j === null || j === undefined) return null;
  if (ti.kind === 'int' || ti.kind === 'long') {
    const v = FromJson({kind: 'long'}, j);
    const [lo, hi] = ti.kind === 'int' ? kIntRange : kLongRange;
    if (v < lo || v > hi) throw new FormError(`${v} is out of range for ${ti.kind}`);
    return v;
  }
  return FromJson(ti, j);
}

// The form sluice's scan prints (used by the fakes).
export function ToSluiceJson(ti, v) {
  if (v === null) return 'null';
  switch (ti.kind) {
    case 'int':
    case 'long':
      return String(v);
    case 'decimal':
      return JSON.stringify(FormatDecimal(v, ti.s));
    case 'double':
      return Number.isFinite(v) ? String(v) : JSON.stringify(String(v));
    case 'timestamptz':
      return JSON.stringify(FormatTimestamp(v, false, true));
    case 'date':
      return JSON.stringify(FormatDate(v));
    default:
      return JSON.stringify(v);
  }
}

// A canonical value in messages.
export function Show(ti, v) {
  if (v === null) return 'NULL';
  switch (ti.kind) {
    case 'decimal':
      return FormatDecimal(v, ti.s);
    case 'timestamptz':
      return FormatTimestamp(v, false, true);
    case 'date':
      return FormatDate(v);
    case 'string':
      return JSON.stringify(v);
    default:
      return String(v);
  }
}
