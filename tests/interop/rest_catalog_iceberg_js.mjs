// sluice's Iceberg REST catalog (`sluice serve`) through an independent client,
// iceberg-js (npm): namespaces (create, list with parent, load, exists, drop),
// tables (list, load with snapshots=all|refs, exists, rename, register, drop
// with purge), errors answered with the spec's status codes and types, and
// bearer-token auth refused and allowed. Tables are made by the sluice CLI;
// what the client loads must be the metadata file sluice wrote.
//
//   node tests/interop/rest_catalog_iceberg_js.mjs path/to/sluice
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IcebergError, IcebergRestCatalog } from 'iceberg-js'

const sluice = process.argv[2]
if (!sluice) throw new Error('usage: rest_catalog_iceberg_js.mjs SLUICE')
const dir = mkdtempSync(join(tmpdir(), 'sluice-rest-'))
const wh = join(dir, 'wh')
const run = (...args) => execFileSync(sluice, ['--warehouse', wh, ...args], { encoding: 'utf8' })
const TOKEN = 'rest-token-' + process.pid
const port = 20000 + Math.floor(Math.random() * 12000)
const baseUrl = `http://127.0.0.1:${port}`
const sleep = ms => new Promise(r => setTimeout(r, ms))

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
  const catalog = new IcebergRestCatalog({ baseUrl, auth: { type: 'bearer', token: TOKEN } })
  const anonymous = new IcebergRestCatalog({ baseUrl })

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
  const create = await error(catalog.createTable({ namespace: ['lake'] }, {
    name: 'fresh', schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', type: 'long', required: true }] } }))
  check('creating a table (not served yet): 406 UnsupportedOperationException', create?.status === 406, String(create?.message))

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
