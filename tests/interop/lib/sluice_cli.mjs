// Runs the sluice Parquet commands, or (SLUICE_FAKE=1) stands in for them with
// DuckDB so the harness itself can be checked without sluice.
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';

import {FromDuck, FromJson, ParseJsonLossless} from './normalize.mjs';
import {AssignFieldIds, DuckType, SqlColumnList} from './types.mjs';
import {RowToJson, ToSql} from './values.mjs';

// Retries a few times when the binary is being relinked (shared checkout).
function Run(bin, args, input = undefined) {
  let r;
  for (let attempt = 0; attempt < 10; ++attempt) {
    r = spawnSync(bin, args, {maxBuffer: 1 << 30, encoding: 'utf8', input});
    if (!['EACCES', 'ETXTBSY', 'ENOENT'].includes(r.error?.code)) break;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
  }
  if (r.error) throw r.error;
  return {
    code: r.status,
    signal: r.signal,
    stdout: r.stdout,
    stderr: r.stderr,
    cmd: [bin, ...args].join(' ')
  };
}

export class RealSluice {
  constructor(bin) {
    this.bin = bin;
    this.name = `sluice (${bin})`;
  }

  // Returns null when the Parquet commands are present, else a reason.
  Missing() {
    if (!fs.existsSync(this.bin)) return `no binary at ${this.bin}`;
    for (const sub of ['write', 'cat']) {
      const r = Run(this.bin, ['parquet', sub, '--help']);
      if (r.code !== 0) return `'sluice parquet ${sub}' is not available (${r.stderr.trim()})`;
    }
    return null;
  }

  // `stdin`: pass the JSON lines on standard input (IN = '-').
  async Write(fields, {codec, rowGroupSize, stdin = false}, jsonl, out) {
    const args = ['parquet', 'write', '--schema', SqlColumnList(fields), '--codec', codec];
    if (rowGroupSize) args.push('--row-group-size', String(rowGroupSize));
    const r = stdin ? Run(this.bin, [...args, '-', out], fs.readFileSync(jsonl)) :
                      Run(this.bin, [...args, jsonl, out]);
    if (r.code !== 0)
      throw new Error(
          `sluice parquet write failed (exit ${r.code}): ${r.stderr.trim()}\n  command: ${r.cmd}`);
  }

  // Runs `sluice parquet cat FILE`, returns {code, signal, stderr}.
  CatRaw(file) {
    return Run(this.bin, ['parquet', 'cat', file]);
  }

  // Runs `sluice parquet write` on `text`, returns {code, stderr}.
  WriteRaw(schemaSql, text, out) {
    return Run(this.bin, ['parquet', 'write', '--schema', schemaSql, '-', out], text);
  }

  // `sluice parquet schema|meta FILE` must succeed and name every top-level column.
  async Inspect(fields, file) {
    for (const sub of ['schema', 'meta']) {
      const r = Run(this.bin, ['parquet', sub, file]);
      if (r.code !== 0)
        throw new Error(
            `sluice parquet ${sub} ${file} failed (exit ${r.code}): ${r.stderr.trim()}`);
      const missing = sub === 'schema' ?
          fields.filter((f) => !r.stdout.includes(f.name)).map((f) => f.name) :
          [];
      if (missing.length)
        throw new Error(`sluice parquet schema ${file} does not mention ${missing}`);
    }
  }

  // Returns the JSON lines printed by `sluice parquet cat`.
  async Cat(fields, file, extra = []) {
    const r = Run(this.bin, ['parquet', 'cat', file, ...extra]);
    if (r.code !== 0)
      throw new Error(`sluice parquet cat ${file} failed (exit ${r.code}): ${r.stderr.trim()}`);
    return r.stdout.split('\n').filter((l) => l !== '');
  }
}

function DuckFieldIds(fields, ids) {
  const forType = (t) => {
    if (t.kind === 'struct') return DuckFieldIds(t.fields, ids);
    if (t.kind === 'list') return {element: forField(t.elem)};
    if (t.kind === 'map') return {key: forField(t.key), value: forField(t.value)};
    return null;
  };
  const forField = (f) => {
    const nested = forType(f.type);
    return nested ? {__duckdb_field_id: ids.get(f), ...nested} : ids.get(f);
  };
  return Object.fromEntries(
      fields.map((f) => [f.name, forField(f)]));  // names: plain or quoted by DuckLiteral
}

const DuckLiteral = (o) => typeof o === 'number' ?
    String(o) :
    `{${Object.entries(o).map(([k, v]) => `'${k}': ${DuckLiteral(v)}`).join(', ')}}`;

export class FakeSluice {
  constructor(conn) {
    this.conn = conn;
    this.name = 'DuckDB posing as sluice (SLUICE_FAKE=1)';
  }
  Missing() {
    return null;
  }
  async Inspect() {}

  async Write(fields, {codec, rowGroupSize}, jsonl, out) {
    const rows = fs.readFileSync(jsonl, 'utf8').split('\n').filter((l) => l).map((l) => {
      const j = ParseJsonLossless(l);
      return Object.fromEntries(fields.map((f, i) => [f.name, FromJson(f.type, j.entries[i][1])]));
    });
    await this.conn.run('DROP TABLE IF EXISTS fake_w');
    await this.conn.run(
        `CREATE TABLE fake_w (${fields.map((f) => `"${f.name}" ${DuckType(f.type)}`).join(', ')})`);
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      await this.conn.run(`INSERT INTO fake_w VALUES ${
          chunk.map((r) => `(${fields.map((f) => ToSql(f.type, r[f.name])).join(', ')})`)
              .join(', ')}`);
    }
    const ids = DuckLiteral(DuckFieldIds(fields, AssignFieldIds(fields)));
    await this.conn.run(
        `COPY fake_w TO '${out}' (FORMAT parquet, COMPRESSION ${codec}, FIELD_IDS ${ids}` +
        `${rowGroupSize ? `, ROW_GROUP_SIZE ${rowGroupSize}` : ''})`);
  }

  async Cat(fields, file, extra = []) {
    const r = await this.conn.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
    return r.getRowObjects().map(
        (row) => RowToJson(
            fields,
            Object.fromEntries(fields.map((f) => [f.name, FromDuck(f.type, row[f.name])]))));
  }
}
