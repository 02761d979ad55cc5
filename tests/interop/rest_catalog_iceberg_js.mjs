// sluice's Iceberg REST catalog (`sluice serve`) through an independent client,
// iceberg-js (npm): namespaces (create, list with parent, load, exists, drop),
// tables (list, load with snapshots=all|refs, exists, rename, register, drop
// with purge, create, staged create, commits with requirements and updates),
// namespace property updates, errors answered with the spec's status codes and
// types, and bearer-token auth refused and allowed. What the client loads must
// be the metadata file sluice wrote; icebird (an independent reader) reads the
// data of a table as the catalog loads it.
//
//   node tests/interop/rest_catalog_iceberg_js.mjs path/to/sluice
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IcebergError, IcebergRestCatalog } from 'iceberg-js'
import { icebergRead } from 'icebird'
import { serveFiles } from './lib/file_fetch.mjs'

const sluice = process.argv[2]
if (!sluice) throw new Error('usage: rest_catalog_iceberg_js.mjs SLUICE')
const dir = mkdtempSync(join(tmpdir(), 'sluice-rest-'))
const wh = join(dir, 'wh')
const run = (...args) => execFileSync(sluice, ['--warehouse', wh, ...args], { encoding: 'utf8' })
const TOKEN = 'rest-token-' + process.pid
const port = 20000 + Math.floor(Math.random() * 12000)
const baseUrl = `http://127.0.0.1:${port}`
const sleep = ms => new Promise(r => setTimeout(r, ms))
// icebird reads files through the global fetch(), which serveFiles() answers
// from disk; the catalog clients keep the real one.
const httpFetch = globalThis.fetch
serveFiles()

let passed = 0
let failed = 0
function check(name, ok, detail = '') {
  if (ok) { passed++; console.log(`ok   ${name}`) } else { failed++; console.log(`FAIL ${name} ${detail}`) }
}
// JSON text with object keys sorted: equal values compare equal.
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map(k => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
  }
  return JSON.stringify(v)
}
async function error(promise) {
  try { await promise } catch (e) { return e }
  return null
}

run('namespace', 'create', 'lake')
run('table', 'create', 'lake.events', '--schema', 'id BIGINT NOT NULL, kind STRING', '--partition', 'bucket(2, id)')
writeFileSync(join(dir, 'rows.jsonl'), '{"id":1,"kind":"a"}\n{"id":2,"kind":"b"}\n')
run('append', 'lake.events', join(dir, 'rows.jsonl'))
run('append', 'lake.events', join(dir, 'rows.jsonl'))
const server = spawn(sluice, ['--warehouse', wh, 'serve', '--listen', `127.0.0.1:${port}`],
  { env: { ...process.env, SLUICE_TOKEN: TOKEN }, stdio: ['ignore', 'ignore', 'pipe'] })
let log = ''
server.stderr.on('data', d => { log += d })

try {
  for (let i = 0; i < 100 && !log.includes('serving'); i++) await sleep(50)
  const catalog = new IcebergRestCatalog({ baseUrl, auth: { type: 'bearer', token: TOKEN }, fetch: httpFetch })
  const anonymous = new IcebergRestCatalog({ baseUrl, fetch: httpFetch })

  const denied = await error(anonymous.listNamespaces())
  check('no token: refused with 401', denied instanceof IcebergError && denied.status === 401, String(denied))

  await catalog.createNamespace({ namespace: ['sales'] }, { properties: { owner: 'ann' } })
  await catalog.createNamespace({ namespace: ['sales', 'eu'] })
  const top = (await catalog.listNamespaces()).namespaces.map(n => n.namespace.join('.')).sort()
  check('namespaces list at the top level', JSON.stringify(top) === '["lake","sales"]', JSON.stringify(top))
  const under = (await catalog.listNamespaces({ parent: { namespace: ['sales'] } })).namespaces
  check('namespaces list under a parent', JSON.stringify(under.map(n => n.namespace)) === '[["sales","eu"]]', JSON.stringify(under))
  const meta = await catalog.loadNamespaceMetadata({ namespace: ['sales'] })
  check('a namespace loads with its properties', meta.properties?.owner === 'ann', JSON.stringify(meta))
  check('namespace exists / does not', await catalog.namespaceExists({ namespace: ['sales', 'eu'] }) &&
    !(await catalog.namespaceExists({ namespace: ['nope'] })))
  const dup = await error(catalog.createNamespace({ namespace: ['sales'] }))
  check('creating an existing namespace: 409 AlreadyExistsException',
    dup?.status === 409 && /AlreadyExists/.test(dup?.icebergType ?? JSON.stringify(dup?.details ?? dup?.message)), String(dup?.message))

  // Idempotency-Key (iceberg-js sends one with every change): advertised,
  // and a retry under the key gets the first answer, not a 409.
  const config = await (await httpFetch(`${baseUrl}/v1/config`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()
  check('the config advertises idempotency-key-lifetime', config['idempotency-key-lifetime'] === 'PT30M', JSON.stringify(config))
  const keyed = () => httpFetch(`${baseUrl}/v1/namespaces`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json',
      'Idempotency-Key': '0190f2a4-7b3c-7def-8123-456789abcdef' },
    body: JSON.stringify({ namespace: ['retried'], properties: {} }),
  })
  const first = await keyed()
  const retry = await keyed()
  check('a create retried under its Idempotency-Key is answered as it landed',
    first.status === 200 && retry.status === 200 && retry.headers.get('idempotent-replayed') === 'true' &&
      canonical(await first.json()) === canonical(await retry.json()), `${first.status} ${retry.status}`)

  const tables = (await catalog.listTables({ namespace: ['lake'] })).identifiers
  check('tables list', canonical(tables) === canonical([{ namespace: ['lake'], name: 'events' }]), JSON.stringify(tables))
  const result = await catalog.loadTableResult({ namespace: ['lake'], name: 'events' })
  const location = result['metadata-location']
  const onDisk = JSON.parse(readFileSync(location.replace(/^file:\/\//, ''), 'utf8'))
  check('a table loads as the metadata file sluice wrote',
    canonical(result.metadata) === canonical(onDisk) && onDisk.snapshots.length === 2)
  const refs = await catalog.loadTable({ namespace: ['lake'], name: 'events' }, { snapshots: 'refs' })
  check('snapshots=refs keeps the snapshots refs point at', refs.snapshots.length === 1 &&
    refs.snapshots[0]['snapshot-id'] === onDisk['current-snapshot-id'])
  check('table exists / does not', await catalog.tableExists({ namespace: ['lake'], name: 'events' }) &&
    !(await catalog.tableExists({ namespace: ['lake'], name: 'nope' })))
  const missing = await error(catalog.loadTable({ namespace: ['lake'], name: 'nope' }))
  check('loading a missing table: 404', missing?.status === 404, String(missing?.message))

  await catalog.renameTable({ source: { namespace: ['lake'], name: 'events' },
    destination: { namespace: ['sales'], name: 'events' } })
  check('a renamed table moves', await catalog.tableExists({ namespace: ['sales'], name: 'events' }) &&
    !(await catalog.tableExists({ namespace: ['lake'], name: 'events' })))
  const registered = await catalog.registerTable({ namespace: ['lake'] },
    { name: 'adopted', 'metadata-location': location })
  check('a table registers by its metadata file', registered['table-uuid'] === onDisk['table-uuid'])
  // sluice reads what the REST catalog registered.
  const scanned = run('scan', 'lake.adopted').trim().split('\n').length
  check('sluice scans the registered table', scanned === 4, String(scanned))

  const notEmpty = await error(catalog.dropNamespace({ namespace: ['lake'] }))
  check('dropping a namespace with tables: 409', notEmpty?.status === 409, String(notEmpty?.message))

  // Tables made through the catalog: a create, sluice appending to it, a
  // client's commits (requirements and updates), icebird reading the data of
  // the table as the catalog loads it.
  const fresh = await catalog.createTableResult({ namespace: ['lake'] }, {
    name: 'fresh',
    schema: { type: 'struct', 'schema-id': 0, fields: [
      { id: 1, name: 'id', type: 'long', required: true },
      { id: 2, name: 'kind', type: 'string', required: false }] },
    'partition-spec': { 'spec-id': 0, fields: [{ name: 'kind', transform: 'identity', 'source-id': 2, 'field-id': 1000 }] },
    properties: { owner: 'ops' } })
  check('a table is created with its first metadata file',
    existsSync(fresh['metadata-location'].replace(/^file:\/\//, '')) && fresh.metadata.properties.owner === 'ops')
  const dupTable = await error(catalog.createTable({ namespace: ['lake'] }, {
    name: 'fresh', schema: { type: 'struct', fields: [{ id: 1, name: 'id', type: 'long', required: true }] } }))
  check('creating an existing table: 409', dupTable?.status === 409, String(dupTable?.message))
  run('append', 'lake.fresh', join(dir, 'rows.jsonl'))
  const id = { namespace: ['lake'], name: 'fresh' }
  let md = await catalog.loadTable(id)
  check('sluice appends to a table the catalog created', md.snapshots.length === 1)
  const props = await catalog.updateTable(id, {
    requirements: [{ type: 'assert-table-uuid', uuid: md['table-uuid'] }],
    updates: [{ action: 'set-properties', updates: { 'write.target-file-size-bytes': '1048576' } }] })
  check('a commit sets properties', props.metadata.properties['write.target-file-size-bytes'] === '1048576')
  const stale = await error(catalog.updateTable(id, {
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
    updates: [{ action: 'set-properties', updates: { lost: 'yes' } }] }))
  check('a commit whose requirement fails: 409 CommitFailedException', stale?.status === 409 &&
    /CommitFailed/.test(stale?.icebergType ?? stale?.message), String(stale?.message))
  const wrong = await error(catalog.updateTable(id, { requirements: [], updates: [{ action: 'make-it-fast' }] }))
  check('an unknown update: 400', wrong?.status === 400, String(wrong?.message))
  // A client writing its own snapshot (here one listing the files of sluice's
  // append: its manifest list) into a table it created. JavaScript numbers
  // hold 53 bits, so this client picks small snapshot ids; Iceberg's are 63-bit.
  const head = md.snapshots[0]
  const copyId = { namespace: ['lake'], name: 'copy' }
  const copy = await catalog.createTable({ namespace: ['lake'] }, { name: 'copy', schema: md.schemas[0],
    'partition-spec': md['partition-specs'][0] })
  const snapshot = { 'snapshot-id': 1, 'sequence-number': 1, 'timestamp-ms': Date.now(),
    'manifest-list': head['manifest-list'], summary: { operation: 'append' }, 'schema-id': 0 }
  const firstCommit = {
    requirements: [{ type: 'assert-table-uuid', uuid: copy['table-uuid'] },
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
    updates: [{ action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 1 }] }
  const appended = await catalog.updateTable(copyId, firstCommit)
  check('a client commits a snapshot', appended.metadata['current-snapshot-id'] === 1)
  const again = await error(catalog.updateTable(copyId, firstCommit))
  check('the same commit again: main moved, 409', again?.status === 409, String(again?.message))
  const loaded = await catalog.loadTable(copyId)
  const rows = await icebergRead({ tableUrl: loaded.location, metadata: loaded })
  const got = rows.map(r => `${r.id}:${r.kind}`).sort().join(' ')
  check('icebird reads the table as the catalog loads it', got === '1:a 2:b', got)
  run('append', 'lake.copy', join(dir, 'rows.jsonl'))
  const scannedCopy = run('scan', 'lake.copy').trim().split('\n').length
  check('sluice appends on top of the client\'s snapshot', scannedCopy === 4, String(scannedCopy))

  // A staged create (nothing written) finished by a commit asserting create.
  const staged = await catalog.createTableResult({ namespace: ['lake'] }, {
    name: 'staged', 'stage-create': true,
    schema: { type: 'struct', fields: [{ id: 1, name: 'x', type: 'int', required: false }] } })
  check('a staged create writes nothing', !staged['metadata-location'] &&
    !(await catalog.tableExists({ namespace: ['lake'], name: 'staged' })))
  const s = staged.metadata
  await catalog.updateTable({ namespace: ['lake'], name: 'staged' }, {
    requirements: [{ type: 'assert-create' }],
    updates: [{ action: 'assign-uuid', uuid: s['table-uuid'] },
      { action: 'upgrade-format-version', 'format-version': 2 },
      { action: 'add-schema', schema: s.schemas[0] }, { action: 'set-current-schema', 'schema-id': -1 },
      { action: 'add-spec', spec: s['partition-specs'][0] }, { action: 'set-default-spec', 'spec-id': -1 },
      { action: 'add-sort-order', 'sort-order': s['sort-orders'][0] },
      { action: 'set-default-sort-order', 'sort-order-id': -1 },
      { action: 'set-location', location: s.location }] })
  const made = await catalog.loadTable({ namespace: ['lake'], name: 'staged' })
  check('its assert-create commit makes the table', made['table-uuid'] === s['table-uuid'])

  const nsProps = await catalog.updateNamespaceProperties({ namespace: ['sales'] },
    { removals: ['owner', 'nope'], updates: { tier: 'gold' } })
  check('namespace properties update', canonical(nsProps) === canonical({ updated: ['tier'], removed: ['owner'], missing: ['nope'] }),
    JSON.stringify(nsProps))
  await catalog.dropTable({ namespace: ['lake'], name: 'fresh' }, { purge: true })
  await catalog.dropTable({ namespace: ['lake'], name: 'staged' }, { purge: true })
  await catalog.dropTable(copyId)

  await catalog.dropTable({ namespace: ['lake'], name: 'adopted' })
  check('a dropped table keeps its files', existsSync(location.replace(/^file:\/\//, '')))
  await catalog.dropTable({ namespace: ['sales'], name: 'events' }, { purge: true })
  check('a purged table\'s files are gone', !existsSync(location.replace(/^file:\/\//, '')))
  await catalog.dropNamespace({ namespace: ['sales', 'eu'] })
  check('an empty namespace drops', !(await catalog.namespaceExists({ namespace: ['sales', 'eu'] })))
} catch (e) {
  failed++
  console.log(`FAIL ${e.stack || e}`)
} finally {
  server.kill('SIGTERM')
  await new Promise(r => server.once('exit', r))
  rmSync(dir, { recursive: true, force: true })
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
