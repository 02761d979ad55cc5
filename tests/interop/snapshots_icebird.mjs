// Every snapshot a table holds, read by icebird (an independent Iceberg
// reader) and by `sluice scan --snapshot`: the same ids in both, each
// snapshot readable (the torture test's audit, tests/pipeline/torture_test.sh).
//
//   node tests/interop/snapshots_icebird.mjs SLUICE WAREHOUSE NAMESPACE.TABLE
//
// The table's metadata comes from `sluice table describe --json`; icebird
// reads each snapshot as the metadata's current one.
import { execFileSync } from 'node:child_process'
import { icebergRead } from 'icebird'
import { serveFiles } from './lib/file_fetch.mjs'

const [sluice, warehouse, table] = process.argv.slice(2)
if (!table) throw new Error('usage: snapshots_icebird.mjs SLUICE WAREHOUSE NAMESPACE.TABLE')

serveFiles()  // icebird reads through fetch(): answered from disk

const run = (...args) =>
  execFileSync(sluice, ['--warehouse', warehouse, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 })
const text = run('table', 'describe', table, '--json')
const metadata = JSON.parse(text)
// Snapshot ids exceed 2^53: take them as text, for sluice.
const ids = [...text.matchAll(/"snapshot-id":\s*(\d+)/g)].map(m => m[1])
const unique = [...new Set(ids)]
const bySnapshot = new Map(metadata.snapshots.map((s, i) => [i, s]))
let failed = 0
let rows = 0
for (const [i, snap] of bySnapshot) {
  const idText = unique.find(t => Number(t) === snap['snapshot-id'])
  const mine = run('scan', table, '--snapshot', idText, '--columns', 'id')
    .split('\n').filter(Boolean).map(l => String(JSON.parse(l).id)).sort()
  let theirs
  try {
    theirs = (await icebergRead({
      tableUrl: metadata.location,
      metadata: { ...metadata, 'current-snapshot-id': snap['snapshot-id'] },
    })).map(r => String(r.id)).sort()
  } catch (e) {
    failed++
    console.log(`FAIL snapshot ${idText} (${i + 1} of ${bySnapshot.size}): icebird: ${e.message}`)
    continue
  }
  const same = mine.length === theirs.length && mine.every((x, k) => x === theirs[k])
  if (!same) {
    failed++
    console.log(`FAIL snapshot ${idText}: sluice ${mine.length} rows, icebird ${theirs.length}`)
  }
  rows += mine.length
}
console.log(`icebird: ${bySnapshot.size - failed} of ${bySnapshot.size} snapshots read as sluice reads them (${rows} rows in all)`)
process.exit(failed === 0 ? 0 : 1)
