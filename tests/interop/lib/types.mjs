// The test's model of sluice (Iceberg) types: random schema generation, the
// sluice SQL spelling, the DuckDB spelling, and the field ids sluice assigns.
//
// A type is {kind, ...}: kinds boolean int long float double date time
// timestamp timestamptz timestamp_ns timestamptz_ns string binary uuid, plus
// {kind:'decimal', p, s}, {kind:'fixed', n}, {kind:'list', elem: Field},
// {kind:'map', key: Field, value: Field}, {kind:'struct', fields: [Field]}.
// A Field is {name, type, required}.

export const kPrimitiveKinds = [
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'decimal',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
  'string',
  'binary',
  'uuid',
  'fixed',
];

const kSqlNames = {
  boolean: 'BOOLEAN',
  int: 'INT',
  long: 'BIGINT',
  float: 'FLOAT',
  double: 'DOUBLE',
  date: 'DATE',
  time: 'TIME',
  timestamp: 'TIMESTAMP',
  timestamptz: 'TIMESTAMPTZ',
  timestamp_ns: 'TIMESTAMP_NS',
  timestamptz_ns: 'TIMESTAMPTZ_NS',
  string: 'STRING',
  binary: 'BINARY',
  uuid: 'UUID',
};

const kDuckNames = {
  boolean: 'BOOLEAN',
  int: 'INTEGER',
  long: 'BIGINT',
  float: 'FLOAT',
  double: 'DOUBLE',
  date: 'DATE',
  time: 'TIME',
  timestamp: 'TIMESTAMP',
  timestamptz: 'TIMESTAMPTZ',
  timestamp_ns: 'TIMESTAMP_NS',
  string: 'VARCHAR',
  binary: 'BLOB',
  uuid: 'UUID',
  fixed: 'BLOB',
};

// sluice's SQL type spelling, e.g. "STRUCT<a: INT NOT NULL, b: ARRAY<STRING>>".
export function SqlType(t) {
  switch (t.kind) {
    case 'decimal':
      return `DECIMAL(${t.p},${t.s})`;
    case 'fixed':
      return `FIXED(${t.n})`;
    case 'list':
      return `ARRAY<${SqlType(t.elem.type)}${t.elem.required ? ' NOT NULL' : ''}>`;
    case 'map':
      return `MAP<${SqlType(t.key.type)}, ${SqlType(t.value.type)}` +
          `${t.value.required ? ' NOT NULL' : ''}>`;
    case 'struct':
      return `STRUCT<${t.fields.map((f) => `${f.name}: ${SqlField(f)}`).join(', ')}>`;
    default:
      return kSqlNames[t.kind];
  }
}

function SqlField(f) {
  return `${SqlType(f.type)}${f.required ? ' NOT NULL' : ''}`;
}

// Quotes names that are not plain identifiers.
export function SqlName(name) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `"${name}"`;
}

export function SqlColumnList(fields) {
  return fields.map((f) => `${SqlName(f.name)} ${SqlField(f)}`).join(', ');
}

// DuckDB's spelling. FIXED has no DuckDB type (BLOB); TIMESTAMPTZ_NS has none.
export function DuckType(t) {
  switch (t.kind) {
    case 'decimal':
      return `DECIMAL(${t.p},${t.s})`;
    case 'list':
      return `${DuckType(t.elem.type)}[]`;
    case 'map':
      return `MAP(${DuckType(t.key.type)}, ${DuckType(t.value.type)})`;
    case 'struct':
      return `STRUCT(${t.fields.map((f) => `${f.name} ${DuckType(f.type)}`).join(', ')})`;
    case 'timestamptz_ns':
      throw new Error('DuckDB has no TIMESTAMPTZ_NS type');
    default:
      return kDuckNames[t.kind];
  }
}

// Replaces types DuckDB cannot hold with what it writes instead (FIXED→BINARY)
// and drops TIMESTAMPTZ_NS (returns null for a field that must be dropped).
export function ForDuckWriter(t) {
  switch (t.kind) {
    case 'fixed':
      return {kind: 'binary'};
    case 'timestamptz_ns':
      return {kind: 'timestamp_ns'};
    case 'list':
      return {kind: 'list', elem: {...t.elem, type: ForDuckWriter(t.elem.type)}};
    case 'map':
      return {
        kind: 'map',
        key: {...t.key, type: ForDuckWriter(t.key.type)},
        value: {...t.value, type: ForDuckWriter(t.value.type)}
      };
    case 'struct':
      return {kind: 'struct', fields: t.fields.map((f) => ({...f, type: ForDuckWriter(f.type)}))};
    default:
      return t;
  }
}

// Iceberg's fresh-id assignment (what sluice's ParseColumnList does): the
// fields of a struct get consecutive ids first, then nested types are visited
// in order; a list's element and a map's key and value likewise.
// Returns a Map from Field object to id.
export function AssignFieldIds(fields) {
  const ids = new Map();
  let next = 1;
  const visitType = (t) => {
    if (t.kind === 'struct')
      visitStruct(t.fields);
    else if (t.kind === 'list') {
      ids.set(t.elem, next++);
      visitType(t.elem.type);
    } else if (t.kind === 'map') {
      ids.set(t.key, next++);
      ids.set(t.value, next++);
      visitType(t.key.type);
      visitType(t.value.type);
    }
  };
  const visitStruct = (fs) => {
    for (const f of fs) ids.set(f, next++);
    for (const f of fs) visitType(f.type);
  };
  visitStruct(fields);
  return ids;
}

// Bytes of the smallest FIXED_LEN_BYTE_ARRAY holding a decimal of precision p.
export function DecimalBytes(p) {
  let n = 1;
  while (2n ** BigInt(8 * n - 1) - 1n < 10n ** BigInt(p) - 1n) ++n;
  return n;
}

// Physical type (and width) the Iceberg spec maps a primitive type to.
export function PhysicalType(t) {
  switch (t.kind) {
    case 'boolean':
      return 'BOOLEAN';
    case 'int':
    case 'date':
      return 'INT32';
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return 'INT64';
    case 'float':
      return 'FLOAT';
    case 'double':
      return 'DOUBLE';
    case 'decimal':
      return t.p <= 9 ? 'INT32' :
          t.p <= 18   ? 'INT64' :
                        `FIXED_LEN_BYTE_ARRAY(${DecimalBytes(t.p)})`;
    case 'string':
    case 'binary':
      return 'BYTE_ARRAY';
    case 'uuid':
      return 'FIXED_LEN_BYTE_ARRAY(16)';
    case 'fixed':
      return `FIXED_LEN_BYTE_ARRAY(${t.n})`;
  }
  return null;  // a group
}

// Expected Parquet schema elements (after the root) in schema order, as
// {name, id, rep, phys}; the repeated middle groups of lists and maps carry no
// id and their name is not checked (name null).
export function ExpectedParquetElements(fields) {
  const ids = AssignFieldIds(fields);
  const out = [];
  const visit = (f, name) => {
    const t = f.type;
    out.push(
        {name, id: ids.get(f), rep: f.required ? 'REQUIRED' : 'OPTIONAL', phys: PhysicalType(t)});
    if (t.kind === 'struct')
      for (const c of t.fields) visit(c, c.name);
    if (t.kind === 'list') {
      out.push({name: null, id: null, rep: 'REPEATED', phys: null});
      visit(t.elem, 'element');
    }
    if (t.kind === 'map') {
      out.push({name: null, id: null, rep: 'REPEATED', phys: null});
      visit(t.key, 'key');
      visit(t.value, 'value');
    }
  };
  for (const f of fields) visit(f, f.name);
  return out;
}

const kMapKeyKinds = ['string', 'int', 'long', 'date', 'decimal', 'uuid'];

export function RandomPrimitive(rng, kind) {
  kind = kind ?? rng.pick(kPrimitiveKinds);
  if (kind === 'decimal') {
    const p = rng.pick([1, 9, 10, 18, 19, 38, rng.int(1, 38)]);
    return {kind, p, s: rng.pick([0, p, rng.int(0, p)])};
  }
  if (kind === 'fixed') return {kind, n: rng.pick([1, 16, rng.int(1, 40)])};
  return {kind};
}

// A random type nested at most `depth` levels; `allow` filters primitive kinds.
export function RandomType(rng, depth, allow = kPrimitiveKinds) {
  const r = rng.next();
  if (depth <= 0 || r < 0.4) return RandomPrimitive(rng, rng.pick(allow));
  if (r < 0.6)
    return {
      kind: 'list',
      elem: {name: 'element', type: RandomType(rng, depth - 1, allow), required: rng.bool(0.3)}
    };
  if (r < 0.8) {
    const keyKinds = kMapKeyKinds.filter((k) => allow.includes(k));
    return {
      kind: 'map',
      key: {name: 'key', type: RandomPrimitive(rng, rng.pick(keyKinds)), required: true},
      value: {name: 'value', type: RandomType(rng, depth - 1, allow), required: rng.bool(0.3)}
    };
  }
  const n = rng.int(1, 4);
  const fields = [];
  for (let i = 0; i < n; ++i) {
    fields.push({name: `f${i}`, type: RandomType(rng, depth - 1, allow), required: rng.bool(0.3)});
  }
  return {kind: 'struct', fields};
}

// A schema: `id BIGINT NOT NULL` (row number), one column of every primitive
// kind in `allow` (random nullability), then `nested` random nested columns.
// With `oddName`, also a column whose name needs quoting.
export function RandomSchema(rng, {allow = kPrimitiveKinds, nested = 3, oddName = false} = {}) {
  const fields = [{name: 'id', type: {kind: 'long'}, required: true}];
  for (const kind of allow) {
    fields.push({name: `c_${kind}`, type: RandomPrimitive(rng, kind), required: rng.bool(0.3)});
  }
  if (oddName)
    fields.push({name: 'Odd name é/中', type: RandomPrimitive(rng, 'string'), required: false});
  for (let i = 0; i < nested; ++i) {
    let t;
    do t = RandomType(rng, 3, allow);
    while (!['list', 'map', 'struct'].includes(t.kind));
    fields.push({name: `n${i}`, type: t, required: rng.bool(0.3)});
  }
  return fields;
}
