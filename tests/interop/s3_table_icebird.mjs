// A warehouse on S3 (a real s3rver, started by tests/with_s3.sh): sluice
// creates, appends to, deletes from, compacts, expires and cleans a table there,
// and after each step icebird (an independent Iceberg reader) reads the table
// straight from the S3 server and must return exactly the rows `sluice scan`
// returns. A table folder and a metadata file on S3 also open by location.
//
//   tests/with_s3.sh node tests/interop/s3_table_icebird.mjs path/to/sluice
//
// icebird turns s3://BUCKET/KEY into https://BUCKET.s3.amazonaws.com/KEY; the
// fetch() installed here sends that to the test server, path-style.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { icebergRead, icebergMetadata } from 'icebird'
import { norm, sameRows } from './lib/row_compare.mjs'

const sluice = process.argv[2]
const endpoint = process.env.SLUICE_TEST_S3_ENDPOINT
if (!sluice || !endpoint) throw new Error('usage: tests/with_s3.sh node s3_table_icebird.mjs SLUICE')

const realFetch = globalThis.fetch
let s3Requests = 0
globalThis.fetch = async (url, init = {}) => {
  const m = /^https:\/\/([^.]+)\.s3\.amazonaws\.com\/(.*)$/.exec(String(url))
  if (!m) throw new Error(`unexpected URL ${url}`)
  s3Requests++
  return realFetch(`${endpoint}/${m[1]}/${m[2]}`, init)
}

const dir = mkdtempSync(join(tmpdir(), 'sluice-s3-icebird-'))
const wh = `s3://lake/icebird-${process.pid}`
const global = ['--warehouse', wh, '--catalog', `sqlite:${join(dir, 'catalog.db')}`]
const run = (...args) => execFileSync(sluice, [...global, ...args], { encoding: 'utf8' })

const cols = ['id', 'name', 'ts', 'amount']
const keyOurs = r => [norm(r.id), norm(r.name ?? null),
  r.ts == null ? 'null' : `t${Date.parse(r.ts.replace(/(\.\d{3})\d*/, '$1'))}`, norm(r.amount ?? null)].join('|')
const keyTheirs = r => cols.map(c => norm(r[c])).join('|')

function currentMetadata(table) {
  const line = run('table', 'describe', table).split('\n').find(l => l.includes('.metadata.json'))
  const m = /(s3:\/\/\S+\/metadata\/)(\S+\.metadata\.json)/.exec(line ?? '')
  if (!m) throw new Error(`no metadata location in: table describe ${table}`)
  return { tableUrl: m[1].replace(/\/metadata\/$/, ''), metadataFileName: m[2] }
}

let passed = 0
let failed = 0
async function check(name, table) {
  const ours = run('scan', table).trim().split('\n').filter(Boolean).map(l => JSON.parse(l))
  const { tableUrl, metadataFileName } = currentMetadata(table)
  const metadata = await icebergMetadata({ tableUrl, metadataFileName })
  const theirs = await icebergRead({ tableUrl, metadata })
  if (sameRows(name, ours.map(keyOurs), theirs.map(keyTheirs))) passed++
  else failed++
  return ours.length
}

try {
  run('namespace', 'create', 'db')
  run('table', 'create', 'db.events', '--schema',
    'id BIGINT NOT NULL, name STRING, ts TIMESTAMPTZ, amount DOUBLE',
    '--partition', 'bucket(4, id)', '--property', 'format-version=2')
  for (let batch = 0; batch < 3; batch++) {
    const lines = []
    for (let i = 0; i < 700; i++) {
      const id = batch * 700 + i
      lines.push(JSON.stringify({
        id,
        name: id % 11 === 0 ? null : `n${id % 97}`,
        ts: new Date(Date.UTC(2026, 0, 1) + id * 61_000).toISOString(),
        amount: id % 13 === 0 ? null : id / 8,
      }))
    }
    const file = join(dir, `batch${batch}.jsonl`)
    writeFileSync(file, lines.join('\n') + '\n')
    run('append', 'db.events', file)
  }
  await check('three appends', 'db.events')
  run('table', 'delete', 'db.events', '--where', "name = 'n5' OR name = 'n6' OR id < 40")
  let want = 0
  for (let id = 0; id < 2100; id++) {
    const name = id % 11 === 0 ? null : `n${id % 97}`
    if (!(name === 'n5' || name === 'n6' || id < 40)) want++
  }
  const afterDelete = await check('position deletes', 'db.events')
  if (afterDelete !== want) throw new Error(`after the delete: ${afterDelete} rows, want ${want}`)
  run('table', 'rewrite', 'db.events')
  await check('rewritten (deletes applied)', 'db.events')
  run('table', 'expire-snapshots', 'db.events', '--older-than', '0s', '--retain-last', '1')
  run('table', 'remove-orphans', 'db.events', '--older-than', '0s')
  await check('expired and cleaned', 'db.events')
  // By location: the table folder and its metadata file on S3, no catalog.
  const { tableUrl, metadataFileName } = currentMetadata('db.events')
  const byFolder = execFileSync(sluice, ['scan', tableUrl], { encoding: 'utf8' }).trim().split('\n').length
  const byFile = execFileSync(sluice, ['scan', `${tableUrl}/metadata/${metadataFileName}`],
    { encoding: 'utf8' }).trim().split('\n').length
  if (byFolder === afterDelete && byFile === afterDelete) {
    passed++
    console.log(`ok   opened by folder and by metadata file on S3: ${byFolder} rows`)
  } else {
    failed++
    console.log(`FAIL by location: folder ${byFolder}, file ${byFile}, want ${afterDelete}`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(`icebird read ${s3Requests} objects/ranges from S3`)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
