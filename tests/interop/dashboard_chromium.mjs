// The dashboard in a real browser (Debian's chromium, driven by playwright-core):
// `sluice run` with a bearer token serves GET /; while a producer streams
// events over HTTP, the page asks for the token, then shows each pipeline,
// table and stream with the numbers /v1/status has (read before and after the
// page's, so a moving number must lie between), sees them change, logs no
// console error, fits a phone's width without scrolling sideways, and saves
// screenshots (desktop and phone) for docs/.
//
//   node tests/interop/dashboard_chromium.mjs path/to/sluice [SCREENSHOT_DIR]
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

const sluice = process.argv[2]
if (!sluice) throw new Error('usage: dashboard_chromium.mjs SLUICE [SCREENSHOT_DIR]')
const dir = mkdtempSync(join(tmpdir(), 'sluice-dashboard-'))
const shots = process.argv[3] || dir
const TOKEN = 'dash-secret-' + process.pid
const port = 20000 + Math.floor(Math.random() * 12000)
const base = `http://127.0.0.1:${port}`
const auth = { Authorization: `Bearer ${TOKEN}` }

writeFileSync(join(dir, 'dash.sql'), `
CREATE TABLE lake.events (id BIGINT NOT NULL, kind STRING) PARTITIONED BY (bucket(4, id));
CREATE SOURCE events_in (id BIGINT, kind STRING) WITH (connector = 'http') FORMAT JSON;
CREATE PIPELINE load_events WITH (commit_interval = '250ms') AS
  INSERT INTO lake.events SELECT id, kind FROM events_in;
`)
// (--no-maintenance: the table is still assessed, and its file count only grows,
// so the page's number can be bounded by two status reads)
const server = spawn(sluice, ['--warehouse', join(dir, 'wh'), 'run', join(dir, 'dash.sql'),
  '--listen', `127.0.0.1:${port}`, '--no-maintenance'], { env: { ...process.env, SLUICE_TOKEN: TOKEN }, stdio: ['ignore', 'ignore', 'pipe'] })
let serverLog = ''
server.stderr.on('data', d => { serverLog += d })

let failed = 0
let passed = 0
function check(name, ok, detail = '') {
  if (ok) { passed++; console.log(`ok   ${name}`) } else { failed++; console.log(`FAIL ${name} ${detail}`) }
}
const sleep = ms => new Promise(r => setTimeout(r, ms))
async function status() {
  const r = await fetch(`${base}/v1/status`, { headers: auth })
  if (!r.ok) throw new Error(`/v1/status: ${r.status}`)
  return r.json()
}
const num = text => Number(String(text).replace(/[^0-9.]/g, ''))

let producing = true
let sent = 0
async function producer() {
  for (let b = 0; producing; b++) {
    const body = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: b * 50 + i, kind: `k${i % 3}` })).join('\n')
    const r = await fetch(`${base}/v1/streams/events_in/records`, {
      method: 'POST', body, headers: { ...auth, 'Content-Type': 'application/x-ndjson' } })
    if (r.ok) sent += 50
    await sleep(100)
  }
}

let browser
try {
  for (let i = 0; i < 100; i++) {
    try { if ((await fetch(`${base}/healthz`)).ok) break } catch {}
    await sleep(100)
  }
  const unauthorized = await fetch(`${base}/v1/status`)
  check('/v1/status refuses a request without the token', unauthorized.status === 401)
  const page0 = await fetch(`${base}/`)
  check('GET / serves the page without a token, under a strict CSP',
    page0.ok && (page0.headers.get('content-security-policy') || '').includes("script-src 'self'"))
  const produced = producer()
  // Wait for the maintenance service to assess the table (it shows in the status).
  for (let i = 0; i < 150 && !(await status()).tables?.length; i++) await sleep(200)

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  const problems = []
  page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`) })
  page.on('pageerror', e => problems.push(`pageerror: ${e.message}`))
  page.on('requestfailed', r => problems.push(`request failed: ${r.url()}`))
  await page.goto(`${base}/`)

  await page.waitForSelector('[data-testid="token-form"]:not([hidden])', { timeout: 60000 })
  check('the page asks for the token', true)
  await page.fill('[data-testid="token"]', TOKEN)
  await page.click('#token-form button')
  const field = (testid, name) => page.textContent(`[data-testid="${testid}"] [data-field="${name}"]`)
  await page.waitForSelector('[data-testid="pipeline-load_events"] [data-field="records_committed"]', { timeout: 60000 })
  await page.waitForSelector('[data-testid="table-lake.events"]', { timeout: 60000 })
  await sleep(2500)  // a few polls: rates and sparklines have points

  // Moving numbers: read /v1/status, wait for the page's second render after
  // that (polls are sequential: its request left after ours was answered), read
  // the page, read /v1/status again: the page's numbers come from between the two.
  const before = await status()
  const renders = Number(await page.getAttribute('body', 'data-renders'))
  await page.waitForFunction(n => Number(document.body.dataset.renders) >= n + 2, renders,
    { timeout: 60000 })
  const shown = {
    committed: num(await field('pipeline-load_events', 'records_committed')),
    commits: num(await field('pipeline-load_events', 'commits')),
    end: num(await field('stream-events_in', 'end_offset')),
    dataFiles: num(await field('table-lake.events', 'data_files')),
  }
  const after = await status()
  const pb = before.pipelines[0], pa = after.pipelines[0]
  check('committed records on the page match /v1/status',
    shown.committed >= pb.records_committed && shown.committed <= pa.records_committed && shown.committed > 0,
    JSON.stringify({ shown: shown.committed, before: pb.records_committed, after: pa.records_committed }))
  check('commits on the page match /v1/status',
    shown.commits >= pb.commits && shown.commits <= pa.commits && shown.commits > 0,
    JSON.stringify({ shown: shown.commits, before: pb.commits, after: pa.commits }))
  check('the stream end offset matches /v1/status',
    shown.end >= before.streams[0].end_offset && shown.end <= after.streams[0].end_offset,
    JSON.stringify({ shown: shown.end, before: before.streams[0].end_offset, after: after.streams[0].end_offset }))
  const tb = before.tables.find(t => t.name === 'lake.events')
  const ta = after.tables.find(t => t.name === 'lake.events')
  check('the table\'s data files match /v1/status',
    shown.dataFiles >= tb.data_files && shown.dataFiles <= ta.data_files && shown.dataFiles > 0,
    JSON.stringify({ shown: shown.dataFiles, before: tb.data_files, after: ta.data_files }))
  check('the page names the pipeline\'s source and target',
    (await page.textContent('[data-testid="pipeline-load_events"] .sub')).includes('events_in → lake.events'))
  check('the table shows its recent snapshots',
    (await page.$$('[data-testid="table-lake.events"] [data-field="recent_snapshots"] tbody tr')).length > 0)
  // The producer sends 50 events every ~100 ms (at most 500/s): the rate shown
  // must be non-zero and plausible. (A pipeline that fell behind on a loaded
  // machine catches up faster than the producer sends: the upper bound is wide.)
  const rate = (await field('pipeline-load_events', 'throughput')).trim()
  check('a throughput is computed from the history', /^[0-9.]+(\/s| K\/s)$/.test(rate) && num(rate) > 0 &&
    (rate.includes('K') ? num(rate) * 1000 : num(rate)) < 1500, rate)

  // It changes while events stream in.
  let later = shown.committed
  for (let i = 0; i < 40 && later <= shown.committed; i++) {
    await sleep(250)
    later = num(await field('pipeline-load_events', 'records_committed'))
  }
  check('the numbers change as events stream in', later > shown.committed, `${shown.committed} -> ${later}`)
  await page.screenshot({ path: join(shots, 'dashboard-desktop.png'), fullPage: true })

  // A phone: one column, nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 })
  await sleep(1200)
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
  check('on a phone the page fits the width (no sideways scrolling)', overflow <= 0, `${overflow}px too wide`)
  await page.screenshot({ path: join(shots, 'dashboard-phone.png'), fullPage: true })
  check('no console errors, warnings or failed requests', problems.length === 0, problems.join('; '))
  producing = false
  await produced
  console.log(`events sent: ${sent}; screenshots in ${shots}`)
} catch (e) {
  failed++
  console.log(`FAIL ${e.stack || e}`)
  console.log(serverLog.slice(-2000))
} finally {
  producing = false
  if (browser) await browser.close()
  server.kill('SIGTERM')
  await new Promise(r => server.once('exit', r))
  rmSync(dir, { recursive: true, force: true })
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
