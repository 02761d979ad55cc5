// Tables written by sluice, read by icebird (an independent Iceberg reader in
// JavaScript on hyparquet): partitioned, with schema evolution, with position
// deletes. icebird must return exactly the rows `sluice scan` returns.
//
//   node tests/interop/iceberg_icebird.mjs path/to/sluice
//
// icebird reads through fetch(): lib/file_fetch.mjs answers from disk.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { icebergRead, icebergMetadata } from 'icebird'
import { serveFiles } from './lib/file_fetch.mjs'
import { norm, sameRows } from './lib/row_compare.mjs'

const sluice = process.argv[2]
if (!sluice) throw new Error('usage: iceberg_icebird.mjs SLUICE_BINARY')
serveFiles()


const dir = mkdtempSync(join(tmpdir(), 'sluice-icebird-'))
const wh = join(dir, 'wh')
const run = (...args) => execFileSync(sluice, ['--warehouse', wh, ...args], { encoding: 'utf8' })

// sluice's JSON value as norm() writes icebird's: timestamps and dates as
// epoch milliseconds.
function normSluice(type, v) {
  if (v === null) return 'null'
  if (type === 'ts') return `t${Date.parse(v.replace(/(\.\d{3})\d*/, '$1'))}`
  if (type === 'date') return `t${Date.parse(v + 'T00:00:00Z')}`
  if (type === 'decimal') return norm(Number(v))  // (icebird reads decimals as numbers)
  return norm(v)
}

let passed = 0
let failed = 0
async function check(name, table, types) {
  const rows = run('scan', table).trim().split('\n').filter(Boolean).map(l => JSON.parse(l))
  const tableDir = join(wh, ...table.split('.'))
  const metaFiles = readdirSync(join(tableDir, 'metadata')).filter(f => f.endsWith('.metadata.json')).sort()
  const metadataFileName = metaFiles[metaFiles.length - 1]
  const tableUrl = `file://${tableDir}`
  const metadata = await icebergMetadata({ tableUrl, metadataFileName })
  const theirs = await icebergRead({ tableUrl, metadata })
  const cols = Object.keys(types)
  const key = r => cols.map(c => c in r ? (types[c] ? normSluice(types[c], r[c]) : norm(r[c])) : 'null').join('|')
  const keyTheirs = r => cols.map(c => norm(r[c])).join('|')
  if (sameRows(name, rows.map(key), theirs.map(keyTheirs))) passed++
  else failed++
}

try {
  run('namespace', 'create', 'lake')
  // 1. Partitioned table, several types, several commits.
  run('table', 'create', 'lake.events', '--schema',
    'id BIGINT NOT NULL, kind STRING, ts TIMESTAMPTZ, amount DOUBLE, flag BOOLEAN, d DATE, qty INT',
    '--partition', 'day(ts), bucket(4, id)')
  const kinds = ['click', 'view', 'buy', 'é ü 漢字']
  for (let c = 0; c < 3; c++) {
    const lines = []
    for (let i = 0; i < 500; i++) {
      const id = c * 1000 + i
      lines.push(JSON.stringify({
        id, kind: i % 11 === 0 ? null : kinds[id % 4],
        ts: new Date(Date.UTC(2024, 0, 1 + (id % 5), id % 24, id % 60, id % 60, id % 1000)).toISOString(),
        amount: id % 7 === 0 ? null : id * 0.25, flag: id % 3 === 0, d: `2024-02-${String(1 + (id % 28)).padStart(2, '0')}`,
        qty: id % 13 === 0 ? null : id - 700,
      }))
    }
    writeFileSync(join(dir, `in${c}.jsonl`), lines.join('\n') + '\n')
    run('append', 'lake.events', join(dir, `in${c}.jsonl`))
  }
  const types = { id: null, kind: null, ts: 'ts', amount: null, flag: null, d: 'date', qty: null }
  await check('partitioned, 3 commits', 'lake.events', types)

  // The table's data files, read by DuckDB directly, hold the same rows.
  {
    const files = JSON.parse(run('table', 'files', 'lake.events', '--json')).map(f => f.file_path.replace('file://', ''))
    const db = await (await DuckDBInstance.create(':memory:')).connect()
    const list = files.map(f => `'${f}'`).join(',')
    const res = (await db.runAndReadAll(
      `SELECT count(*)::BIGINT AS n, sum(id)::BIGINT AS s, count(kind)::BIGINT AS k, sum(qty)::BIGINT AS q,
              min(ts)::VARCHAR AS t0, max(d)::VARCHAR AS d1 FROM read_parquet([${list}])`)).getRowObjectsJson()[0]
    const rows = run('scan', 'lake.events').trim().split('\n').map(l => JSON.parse(l))
    const mine = {
      n: String(rows.length), s: String(rows.reduce((a, r) => a + r.id, 0)),
      k: String(rows.filter(r => r.kind !== null).length), q: String(rows.reduce((a, r) => a + (r.qty ?? 0), 0)),
    }
    const same = ['n', 's', 'k', 'q'].every(c => String(res[c]) === mine[c])
    if (same) {
      passed++
      console.log(`ok   DuckDB read_parquet over the ${files.length} data files: ${mine.n} rows, same sums`)
    } else {
      failed++
      console.log(`FAIL DuckDB read_parquet: ${JSON.stringify(res)} vs sluice ${JSON.stringify(mine)}`)
    }
  }

  // 2. Row-level deletes (position delete files).
  run('table', 'delete', 'lake.events', '--where', "kind = 'buy' OR id < 40")
  await check('after position deletes', 'lake.events', types)

  // 3. Schema evolution: add a column, widen one; then more data.
  run('table', 'alter', 'lake.events', '--add-column', 'note STRING', '--widen-column', 'qty=BIGINT')
  writeFileSync(join(dir, 'evolved.jsonl'),
    [5000, 5001, 5002].map(id => JSON.stringify({ id, kind: 'new', ts: '2024-01-02T00:00:00Z', note: `n${id}`, qty: id })).join('\n') + '\n')
  run('append', 'lake.events', join(dir, 'evolved.jsonl'))
  const evolved = { ...types, note: null }
  await check('after add column/widen + append', 'lake.events', evolved)

  // 4. A rename, then compaction. icebird matches columns by name, not by
  // field id, so it can only follow a rename once the files are rewritten
  // (sluice reads renamed columns by id either way).
  run('table', 'alter', 'lake.events', '--rename-column', 'kind=category')
  run('table', 'rewrite', 'lake.events')
  const renamed = { id: null, category: null, ts: 'ts', amount: null, flag: null, d: 'date', qty: null, note: null }
  await check('after rename + rewrite', 'lake.events', renamed)

  // 5. Compaction by partition: more small files in every partition, then
  // `table compact` merges each partition's (icebird reads the result).
  for (let round = 0; round < 6; round++) {
    writeFileSync(join(dir, `more${round}.jsonl`),
      [0, 1, 2, 3].map(i => JSON.stringify({ id: 7000 + round * 10 + i, category: `c${i % 2}`, ts: '2024-01-03T00:00:00Z', qty: i })).join('\n') + '\n')
    run('append', 'lake.events', join(dir, `more${round}.jsonl`))
  }
  const compacted = run('table', 'compact', 'lake.events', '--min-input-files', '2')
  if (/[1-9]\d* compacted, 0 skipped/.test(compacted)) {
    passed++
  } else {
    console.log(`FAIL table compact: ${compacted}`)
    failed++
  }
  await check('after table compact', 'lake.events', renamed)

  // 6. Expiry: every snapshot but the current one goes, with the files only
  // they reached (the rewritten files, the position deletes); the table
  // still reads the same for both readers.
  const dry = run('table', 'expire-snapshots', 'lake.events', '--older-than', '0s', '--dry-run')
  if (/^would expire [1-9]\d* snapshots/.test(dry) && /\n  data /.test(dry)) {
    passed++
  } else {
    console.log(`FAIL expire-snapshots --dry-run: ${dry}`)
    failed++
  }
  console.log(run('table', 'expire-snapshots', 'lake.events', '--older-than', '0s').trim())
  await check('after expire-snapshots', 'lake.events', renamed)

  // 7. Orphan cleanup with no margin on a quiet table: whatever it removes,
  // the table reads the same.
  console.log(run('table', 'remove-orphans', 'lake.events', '--older-than', '0s').trim())
  await check('after remove-orphans', 'lake.events', renamed)

  // 8. `sluice maintain`: every step by the table's policy (a dry run first).
  const plan = run('maintain', '--dry-run')
  const done = run('maintain', 'lake.events')
  if (/lake\.events: \d+ partitions/.test(plan) && /expired 0 snapshots of lake\.events/.test(done)) {
    passed++
  } else {
    console.log(`FAIL sluice maintain: ${plan}\n${done}`)
    failed++
  }
  await check('after maintain', 'lake.events', renamed)

  // 9. Format v3 row lineage through compaction (icebird reads no v3, so
  // DuckDB reads the compacted file itself): each row's _row_id and
  // _last_updated_sequence_number before compaction, as sluice derives them
  // (first_row_id + position, the data sequence number), are the values the
  // compaction stored in its output's columns of those names.
  {
    run('table', 'create', 'lake.lineage', '--schema', 'id BIGINT NOT NULL, kind STRING',
      '--property', 'format-version=3')
    for (let c = 0; c < 4; c++) {
      writeFileSync(join(dir, `l${c}.jsonl`),
        Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: c * 50 + i, kind: `k${i % 3}` })).join('\n') + '\n')
      run('append', 'lake.lineage', join(dir, `l${c}.jsonl`))
    }
    run('table', 'delete', 'lake.lineage', '--where', 'id IN (0, 7, 14, 63, 70, 140, 199)')
    const lineage = () => new Map(run('scan', 'lake.lineage', '--row-lineage').trim().split('\n')
      .map(l => JSON.parse(l)).map(r => [r.id, `${r._row_id}/${r._last_updated_sequence_number}`]))
    const before = lineage()
    run('table', 'compact', 'lake.lineage', '--min-input-files', '2')
    const files = JSON.parse(run('table', 'files', 'lake.lineage', '--json'))
      .filter(f => f.content === 'data').map(f => f.file_path.replace('file://', ''))
    const db = await (await DuckDBInstance.create(':memory:')).connect()
    const stored = (await db.runAndReadAll(
      `SELECT id::BIGINT AS id, _row_id::BIGINT AS r, _last_updated_sequence_number::BIGINT AS s
       FROM read_parquet([${files.map(f => `'${f}'`).join(',')}])`)).getRowObjectsJson()
    const after = lineage()
    const same = files.length === 1 && files[0].includes('/compact-') && stored.length === before.size &&
      stored.every(r => before.get(Number(r.id)) === `${r.r}/${r.s}`) &&
      [...before].every(([id, v]) => after.get(id) === v)
    if (same) {
      passed++
      console.log(`ok   v3 lineage: ${stored.length} rows keep _row_id and _last_updated_sequence_number through compaction (DuckDB reads them from the file)`)
    } else {
      failed++
      console.log(`FAIL v3 lineage: files ${JSON.stringify(files)}, DuckDB ${JSON.stringify(stored.slice(0, 3))}, before ${JSON.stringify([...before].slice(0, 3))}`)
    }
  }

  // 9b. Compaction that copies pages (columns without a dictionary: their
  // pages go into the merged row group without being decoded; strings' bounds
  // truncated, so inexact): DuckDB reads the compacted file as the inputs,
  // filters pushed down on the copied columns included, and so does icebird.
  // The three inputs are snappy, zstd level 1 (both recompressed) and zstd 3
  // (kept as they are); `tag` has a dictionary in the first only (decoded
  // there, its pages copied from the others after the dictionary's).
  {
    run('table', 'create', 'lake.copied', '--schema',
      'id BIGINT NOT NULL, url STRING, amount DOUBLE, price DECIMAL(20,2), flag BOOLEAN, ts TIMESTAMPTZ, kind STRING, tag STRING',
      // (pages of 64 bytes: these small files' chunks are then copied, as
      // those of large files are with the default 1 MiB)
      '--property', 'write.parquet.page-size-bytes=64', '--property', 'write.parquet.compression-codec=snappy')
    const properties = [[], ['write.parquet.compression-codec=zstd', 'write.parquet.compression-level=1'],
      ['write.parquet.compression-level=3']]
    for (let c = 0; c < 3; c++) {
      for (const p of properties[c]) run('table', 'alter', 'lake.copied', '--property', p)
      const lines = []
      for (let i = 0; i < 700; i++) {
        const id = c * 700 + i
        lines.push(JSON.stringify({
          id, url: id % 9 === 4 ? null : `https://shop.example.com/item/${id}?ref=${(id * 7919) % 1000}`,
          amount: id % 11 === 0 ? null : id * 0.5 - 300, price: `${id - 1000}.${String(id % 100).padStart(2, '0')}`,
          flag: id % 3 === 0, ts: new Date(Date.UTC(2024, 0, 1, 0, 0, id % 3600)).toISOString(),
          kind: ['a', 'bb', 'ccc'][id % 3], tag: c === 0 ? `t${id % 4}` : `tag-${id}`,
        }))
      }
      writeFileSync(join(dir, `copied${c}.jsonl`), lines.join('\n') + '\n')
      run('append', 'lake.copied', join(dir, `copied${c}.jsonl`))
    }
    const dataFiles = () => JSON.parse(run('table', 'files', 'lake.copied', '--json'))
      .filter(f => f.content === 'data').map(f => `'${f.file_path.replace('file://', '')}'`).join(',')
    const db = await (await DuckDBInstance.create(':memory:')).connect()
    const probe = async () => (await db.runAndReadAll(
      `SELECT count(*)::BIGINT AS n, sum(hash(id, url, amount, price, flag, ts, kind, tag))::VARCHAR AS h,
              count(url)::BIGINT AS u, min(url) AS u0, max(url) AS u1, sum(amount)::VARCHAR AS a,
              (SELECT count(*) FROM read_parquet([${dataFiles()}]) WHERE url = 'https://shop.example.com/item/1500?ref=${(1500 * 7919) % 1000}')::BIGINT AS one,
              (SELECT count(*) FROM read_parquet([${dataFiles()}]) WHERE id BETWEEN 690 AND 710 AND amount > 50)::BIGINT AS range,
              (SELECT count(*) FROM read_parquet([${dataFiles()}]) WHERE id > 2050 OR amount > 745)::BIGINT AS top,
              (SELECT count(*) FROM read_parquet([${dataFiles()}]) WHERE url > 'https://shop.example.com/item/999')::BIGINT AS last
       FROM read_parquet([${dataFiles()}])`)).getRowObjectsJson()[0]
    const codecs = async () => (await db.runAndReadAll(
      `SELECT DISTINCT compression::VARCHAR FROM parquet_metadata([${dataFiles()}]) ORDER BY 1`)).getRows().join(',')
    const before = await probe()
    const codecsBefore = await codecs()
    const out = run('table', 'compact', 'lake.copied', '--min-input-files', '2')
    const copied = Number((out.match(/, (\d+) of them pages copied/) || [])[1] || 0)
    const after = await probe()
    const codecsAfter = await codecs()
    const same = JSON.stringify(before) === JSON.stringify(after) && before.n === '2100' && before.one === '1' &&
      before.top === '49' && codecsBefore === 'SNAPPY,ZSTD' && codecsAfter === 'ZSTD'
    if (same && copied > 0 && dataFiles().includes('/compact-')) {
      passed++
      console.log(`ok   compaction copying pages (${copied} bytes copied): DuckDB reads the same rows, filters included`)
    } else {
      failed++
      console.log(`FAIL compaction copying pages: ${out}\nbefore ${JSON.stringify(before)} (${codecsBefore})\nafter  ${JSON.stringify(after)} (${codecsAfter})`)
    }
    await check('after compaction copying pages', 'lake.copied',
      { id: null, url: null, amount: null, price: 'decimal', flag: null, ts: 'ts', kind: null, tag: null })
  }

  // 10. Upserts: a pipeline into a primary-key table (format v2), three
  // bounded runs over files of changes to 200 keys (repeated keys within a
  // file and across files). icebird must read each key's last row, as a
  // model map says, after each run (and sluice scan agrees).
  {
    const inDir = join(dir, 'changes')
    mkdirSync(inDir)
    writeFileSync(join(dir, 'upsert.sql'), `
      CREATE TABLE lake.users (id BIGINT, name STRING, n BIGINT, PRIMARY KEY (id))
        PARTITIONED BY (bucket(4, id));
      CREATE SOURCE users_in (id BIGINT, name STRING, n BIGINT)
        WITH (connector = 'file', path = '${inDir}') FORMAT JSON;
      CREATE PIPELINE load_users WITH (commit_interval = '50ms') AS
        INSERT INTO lake.users SELECT id, name, n FROM users_in;`)
    const model = new Map()
    let n = 0
    let seed = 7
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
    for (let f = 0; f < 3; f++) {
      const lines = []
      for (let i = 0; i < 600; i++) {
        const id = (rand() >> 8) % 200
        n++
        model.set(id, n)
        lines.push(JSON.stringify({ id, name: `v${n}`, n }))
      }
      writeFileSync(join(inDir, `changes-${f}.jsonl`), lines.join('\n') + '\n')
      run('run', join(dir, 'upsert.sql'), '--bounded')
      const tableDir = join(wh, 'lake', 'users')
      const metaFiles = readdirSync(join(tableDir, 'metadata')).filter(m => m.endsWith('.metadata.json')).sort()
      const metadata = await icebergMetadata({ tableUrl: `file://${tableDir}`, metadataFileName: metaFiles[metaFiles.length - 1] })
      const theirs = (await icebergRead({ tableUrl: `file://${tableDir}`, metadata }))
        .map(r => `${r.id}|${r.name}|${r.n}`).sort()
      const want = [...model].map(([id, v]) => `${id}|v${v}|${v}`).sort()
      const same = theirs.length === want.length && theirs.every((x, i) => x === want[i])
      if (same) {
        passed++
        console.log(`ok   upserts, run ${f + 1}: icebird reads ${theirs.length} keys, each its last row`)
      } else {
        failed++
        console.log(`FAIL upserts, run ${f + 1}: icebird ${theirs.length} rows, model ${want.length}; first: ${theirs[0]} vs ${want[0]}`)
      }
    }
    await check('upserted table (sluice scan = icebird)', 'lake.users', { id: null, name: null, n: null })
  }

  // 11. CDC: Debezium events (MySQL binlog positions; inserts, updates,
  // deletes, events sent again) mirrored into a primary-key table (format
  // v2: position deletes) by three bounded runs. icebird must read the model
  // after each run, and the changelog (sluice table changes), applied in
  // order to an empty map, must give it too.
  {
    const inDir = join(dir, 'cdc')
    mkdirSync(inDir)
    writeFileSync(join(dir, 'cdc.sql'), `
      CREATE TABLE lake.accounts (id BIGINT, balance BIGINT, PRIMARY KEY (id))
        PARTITIONED BY (bucket(4, id));
      CREATE SOURCE account_changes (id BIGINT, balance BIGINT)
        WITH (connector = 'file', path = '${inDir}') FORMAT DEBEZIUM;
      CREATE PIPELINE mirror WITH (commit_interval = '50ms') AS
        INSERT INTO lake.accounts SELECT id, balance FROM account_changes;`)
    const model = new Map()
    const sent = []
    let pos = 0
    let seed = 11
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
    const event = (op, id, balance) => {
      pos++
      return JSON.stringify({
        before: op === 'c' ? null : (op === 'd' ? { id, balance: null } : { id, balance: 0 }),
        after: op === 'd' ? null : { id, balance },
        source: { connector: 'mysql', snapshot: 'false', file: 'mysql-bin.000001', pos, row: 0 },
        op, ts_ms: 1700000000000
      })
    }
    for (let f = 0; f < 3; f++) {
      const lines = []
      for (let i = 0; i < 500; i++) {
        const id = (rand() >> 8) % 150
        const r = (rand() >> 8) % 10
        if (r === 0 && sent.length > 50) {  // an event sent again: skipped (older than the last)
          lines.push(sent[(rand() >> 8) % (sent.length - 20)])
          continue
        }
        let line
        if (r < 3 && model.has(id)) {
          model.delete(id)
          line = event('d', id, null)
        } else {
          const balance = (rand() >> 8) % 100000
          line = event(model.has(id) ? 'u' : 'c', id, balance)
          model.set(id, balance)
        }
        lines.push(line)
        sent.push(line)
      }
      writeFileSync(join(inDir, `changes-${f}.jsonl`), lines.join('\n') + '\n')
      run('run', join(dir, 'cdc.sql'), '--bounded')
      const tableDir = join(wh, 'lake', 'accounts')
      const metaFiles = readdirSync(join(tableDir, 'metadata')).filter(m => m.endsWith('.metadata.json')).sort()
      const metadata = await icebergMetadata({ tableUrl: `file://${tableDir}`, metadataFileName: metaFiles[metaFiles.length - 1] })
      const theirs = (await icebergRead({ tableUrl: `file://${tableDir}`, metadata }))
        .map(r => `${r.id}|${r.balance}`).sort()
      const want = [...model].map(([id, b]) => `${id}|${b}`).sort()
      const same = theirs.length === want.length && theirs.every((x, i) => x === want[i])
      if (same) {
        passed++
        console.log(`ok   CDC, run ${f + 1}: icebird reads the mirror of ${theirs.length} accounts`)
      } else {
        failed++
        console.log(`FAIL CDC, run ${f + 1}: icebird ${theirs.length} rows, model ${want.length}; first: ${theirs[0]} vs ${want[0]}`)
      }
    }
    const replayed = new Map()
    let consistent = true
    for (const line of run('table', 'changes', 'lake.accounts').split('\n').filter(Boolean)) {
      const c = JSON.parse(line)
      if (c._change === '+I' || c._change === '+U') {
        consistent = consistent && (c._change === '+U' || !replayed.has(c.id))
        replayed.set(c.id, c.balance)
      } else {
        consistent = consistent && replayed.get(c.id) === c.balance
        replayed.delete(c.id)
      }
    }
    const same = consistent && replayed.size === model.size &&
      [...model].every(([id, b]) => replayed.get(id) === b)
    if (same) {
      passed++
      console.log(`ok   CDC changelog: applied in order, it gives the mirror (${model.size} accounts)`)
    } else {
      failed++
      console.log(`FAIL CDC changelog: consistent ${consistent}, ${replayed.size} keys, model ${model.size}`)
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
