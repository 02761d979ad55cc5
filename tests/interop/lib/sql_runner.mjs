// Running sluice for the SQL differential tests (sql_expr_differential.mjs,
// sql_window_differential.mjs): the command line with retries, a sluice over
// one warehouse (`run --check`, `run --bounded`, `scan`), the base of the
// fakes that play it, reading the JSON lines `sluice scan` prints (tables
// keyed by id, dead-letter tables), and the PASS/FAIL lines with their count.
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';

import {FormError, JNum, JObj, ParseJsonLossless} from './normalize.mjs';

// Retries a few times when the binary is being relinked (shared checkout).
export function Run(bin, args, timeoutMs = 120000) {
  let r;
  for (let attempt = 0; attempt < 10; ++attempt) {
    r = spawnSync(bin, args, {maxBuffer: 1 << 30, encoding: 'utf8', timeout: timeoutMs});
    if (!['EACCES', 'ETXTBSY', 'ENOENT'].includes(r.error?.code)) break;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
  }
  if (r.error && r.error.code !== 'ETIMEDOUT') throw r.error;
  return {
    code: r.status,
    signal: r.signal,
    timedOut: r.error?.code === 'ETIMEDOUT',
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
    cmd: [bin, ...args].join(' ')
  };
}

// The sluice binary `bin` over the warehouse `wh`.
export class RealSluice {
  constructor(bin, wh) {
    this.bin = bin;
    this.wh = wh;
    this.name = `sluice (${bin})`;
  }
  Missing() {
    return fs.existsSync(this.bin) ? null : `no binary at ${this.bin}`;
  }
  // Runs `sluice --warehouse WH args...`; throws unless it exits 0.
  Must(args) {
    const r = Run(this.bin, ['--warehouse', this.wh, ...args]);
    if (r.code !== 0) throw new Error(`${r.cmd} failed: ${r.stderr.trim()}`);
    return r;
  }
  // null when the script binds, else {line, column, message}.
  Check(sqlFile) {
    const r = Run(this.bin, ['--warehouse', this.wh, 'run', '--check', sqlFile]);
    if (r.code === 0) return null;
    const m = /line (\d+), column (\d+)/.exec(r.stderr);
    return {
      line: m ? Number(m[1]) : null,
      column: m ? Number(m[2]) : null,
      message: r.stderr.trim() || `exit ${r.code ?? r.signal}`
    };
  }
  Run(sqlFile) {
    const started = Date.now();
    const r = Run(this.bin, ['--warehouse', this.wh, 'run', sqlFile, '--bounded'], 90000);
    if (r.timedOut) throw new Error(`${r.cmd} did not finish in 90 s`);
    if (r.code !== 0) {
      throw new Error(`${r.cmd} failed (exit ${r.code ?? r.signal}):\n${r.stderr.trim()}`);
    }
    console.log(`sluice run --bounded: ${Date.now() - started} ms`);
  }
  // The JSON lines `sluice scan` prints for the table.
  Scan(table) {
    const r = Run(this.bin, ['--warehouse', this.wh, 'scan', table, '--format', 'jsonl']);
    if (r.code !== 0) {
      throw new Error(
          `sluice scan ${table} failed (exit ${r.code ?? r.signal}): ${r.stderr.trim()}`);
    }
    return r.stdout.split('\n').filter((l) => l !== '');
  }
}

// What the fakes share: every script binds, and a table's scan prints the
// lines set in `out` (table name → JSON lines).
export class FakeSluiceBase {
  constructor(name) {
    this.name = name;
    this.out = new Map();
  }
  Missing() {
    return null;
  }
  Check() {
    return null;
  }
  Scan(table) {
    if (!this.out.has(table)) throw new Error(`no table ${table}`);
    return this.out.get(table);
  }
}

// ---------------------------------------------------------------------------
// Reading scan output. Problems (bad lines, duplicates) are pushed to the
// array `problems`; `as` (BigInt or Number) makes a row's id.

// One JSON line → Map(column → JSON value (normalize.mjs)); null if it is not
// a JSON object.
export function ParseRow(line, problems, where) {
  try {
    const j = ParseJsonLossless(line);
    if (!(j instanceof JObj)) throw new FormError('not an object');
    return new Map(j.entries);
  } catch (e) {
    problems.push(`${where}: unparsable line ${line.slice(0, 200)} (${e.message})`);
    return null;
  }
}

export function IdOf(j, as = BigInt) {
  return j instanceof JNum && /^-?\d+$/.test(j.text) ? as (j.text) : null;
}

// The rows of a table: id → Map(column → JSON value).
export function ReadTable(lines, problems, table, as = BigInt) {
  const rows = new Map();
  for (const line of lines) {
    const row = ParseRow(line, problems, table);
    if (!row) continue;
    const id = IdOf(row.get('id'), as);
    if (id === null) {
      problems.push(`${table}: row without an integer id: ${line.slice(0, 200)}`);
    } else if (rows.has(id)) {
      problems.push(`${table}: id ${id} twice`);
    } else {
      rows.set(id, row);
    }
  }
  return rows;
}

// Dead letters: id (from the payload) → {error, payload (the text, or null)}.
export function ReadDeadLetters(lines, problems, table, as = BigInt) {
  const out = new Map();
  for (const line of lines) {
    const row = ParseRow(line, problems, table);
    if (!row) continue;
    const payload = row.get('payload');
    const error = row.get('error');
    let id = null;
    if (typeof payload === 'string') {
      try {
        const p = ParseJsonLossless(payload);
        if (p instanceof JObj) id = IdOf(new Map(p.entries).get('id'), as);
      } catch (e) {
      }
    }
    if (id === null) {
      problems.push(`${table}: dead letter without an id in its payload: ${line.slice(0, 200)}`);
    } else if (out.has(id)) {
      problems.push(`${table}: dead letter for id ${id} twice`);
    } else {
      out.set(id, {
        error: typeof error === 'string' ? error : JSON.stringify(error),
        payload: typeof payload === 'string' ? payload : null
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The report: one PASS/FAIL line per case (a failure with its first `shown`
// problems), then "N passed, M failed".

export class Results {
  constructor(shown) {
    this.shown = shown;
    this.passed = 0;
    this.failed = 0;
  }
  Report(name, problems) {
    if (problems.length === 0) {
      ++this.passed;
      console.log(`PASS ${name}`);
    } else {
      ++this.failed;
      console.log(`FAIL ${name}: ${problems.length} problem(s)`);
      for (const p of problems.slice(0, this.shown)) console.log(`       ${p}`);
    }
  }
  Summary() {
    return `${this.passed} passed, ${this.failed} failed`;
  }
  // A sluice that cannot run (no binary) fails, and ends the test.
  StopIfMissing(sluice) {
    const missing = sluice.Missing();
    if (!missing) return;
    this.Report(sluice.name, [missing]);
    console.log(this.Summary());
    process.exit(1);
  }
  // Prints the summary (and `note`), removes the temp dir `tmp` unless a case
  // failed or SLUICE_INTEROP_KEEP=1, and exits, 1 on any failure.
  Finish(tmp, sqlFile, note = '') {
    console.log(`${this.Summary()}${note}`);
    if (this.failed === 0 && process.env.SLUICE_INTEROP_KEEP !== '1') {
      fs.rmSync(tmp, {recursive: true, force: true});
    } else {
      console.log(`temp dir kept: ${tmp} (script ${sqlFile})`);
    }
    process.exit(this.failed ? 1 : 0);
  }
}
