// The sluice dashboard: polls /v1/status every second and draws pipelines,
// tables and streams. Everything comes from that one document; rates and
// sparklines come from the history this page keeps (5 minutes). Values are
// written with textContent only (never parsed as HTML).
'use strict'

const POLL_MS = 1000
const HISTORY_MS = 5 * 60 * 1000
const history = new Map()  // pipeline name -> [{t, committed, freshness, lag}]
let token = sessionStorage.getItem('sluice-token') || ''
let timer = null
let generation = 0  // a new token starts a new polling loop; older ones stop

const $ = id => document.getElementById(id)

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v
    else e.setAttribute(k, v)
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)))
  return e
}

function fmtInt(n) {
  return n == null ? '–' : Number(n).toLocaleString('en-US')
}
function fmtRate(n) {
  if (n == null || !isFinite(n)) return '–'
  if (n >= 1e6) return (n / 1e6).toFixed(2) + ' M/s'
  if (n >= 1e3) return (n / 1e3).toFixed(1) + ' K/s'
  return n.toFixed(0) + '/s'
}
function fmtSeconds(s) {
  if (s == null) return '–'
  if (s < 1) return (s * 1000).toFixed(0) + ' ms'
  if (s < 120) return s.toFixed(1) + ' s'
  if (s < 7200) return (s / 60).toFixed(1) + ' min'
  return (s / 3600).toFixed(1) + ' h'
}
function fmtBytes(b) {
  if (b == null) return '–'
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  while (b >= 1024 && i < units.length - 1) { b /= 1024; i++ }
  return (i === 0 ? b.toFixed(0) : b.toFixed(1)) + ' ' + units[i]
}
function fmtAgo(ms) {
  return fmtSeconds(Math.max(0, Date.now() - ms) / 1000) + ' ago'
}

function stat(label, value, field, cls = '') {
  return el('div', { class: 'stat ' + cls },
    el('div', { class: 'label' }, label),
    el('div', { class: 'value', 'data-field': field }, value))
}

function sparkline(label, points, format) {
  const svgNS = 'http://www.w3.org/2000/svg'
  const svg = document.createElementNS(svgNS, 'svg')
  svg.setAttribute('viewBox', '0 0 100 36')
  svg.setAttribute('preserveAspectRatio', 'none')
  svg.setAttribute('role', 'img')
  svg.setAttribute('aria-label', label)
  const values = points.map(p => p.v).filter(v => v != null && isFinite(v))
  if (values.length >= 2) {
    const t0 = points[0].t
    const span = Math.max(1, points[points.length - 1].t - t0)
    const max = Math.max(...values, 1e-9)
    const line = document.createElementNS(svgNS, 'polyline')
    line.setAttribute('points', points.filter(p => p.v != null && isFinite(p.v))
      .map(p => `${((p.t - t0) / span * 100).toFixed(2)},${(34 - p.v / max * 32).toFixed(2)}`).join(' '))
    svg.append(line)
  }
  const last = values.length ? values[values.length - 1] : null
  return el('div', { class: 'spark' },
    el('div', { class: 'label' }, el('span', {}, label), el('span', {}, 'max ' + format(values.length ? Math.max(...values) : null) + ' · now ' + format(last))),
    svg)
}

function remember(p, now) {
  let h = history.get(p.name)
  if (!h) history.set(p.name, h = [])
  h.push({ t: now, committed: p.records_committed, freshness: p.freshness_seconds, lag: p.lag_records })
  while (h.length > 2 && now - h[0].t > HISTORY_MS) h.shift()
  return h
}

// Committed records per second at each poll, over the window before it: at
// least 5 s and two commit intervals, so commits landing between polls do not
// make the rate jump between 0 and twice its value. A counter that went down
// (the process restarted) restarts the window.
function rates(h, windowMs) {
  const out = []
  let from = 0
  for (let i = 1; i < h.length; i++) {
    if (h[i].committed < h[i - 1].committed) from = i
    while (from < i - 1 && h[i].t - h[from + 1].t >= windowMs) from++
    const dt = (h[i].t - h[from].t) / 1000
    out.push({ t: h[i].t, v: dt > 0 && i > from ? (h[i].committed - h[from].committed) / dt : null })
  }
  return out
}

function pipelineCard(p, now) {
  const h = remember(p, now)
  const r = rates(h, Math.max(5000, 2 * (p.commit_interval_ms || 0)))
  const rate = r.length ? r[r.length - 1].v : null
  let badge = el('span', { class: 'badge good' }, 'running')
  if (p.retrying) badge = el('span', { class: 'badge warn' }, 'retrying')
  else if (!p.running) badge = el('span', { class: 'badge bad' }, 'stopped')
  const card = el('div', { class: 'card', 'data-testid': 'pipeline-' + p.name },
    el('div', { class: 'title' }, el('h3', {}, p.name), badge),
    el('div', { class: 'sub' }, `${p.source} → ${p.target} · checkpoint ${p.checkpoint} · epoch ${p.epoch}`),
    el('div', { class: 'stats' },
      stat('lag', fmtInt(p.lag_records), 'lag_records', p.lag_records > 100000 ? 'warn' : ''),
      stat('freshness', fmtSeconds(p.freshness_seconds), 'freshness_seconds'),
      stat('throughput', fmtRate(rate), 'throughput'),
      stat('committed', fmtInt(p.records_committed), 'records_committed'),
      stat('commits', fmtInt(p.commits), 'commits'),
      stat('commit failures', fmtInt(p.commit_failures), 'commit_failures', p.commit_failures > 0 ? 'bad' : ''),
      stat('dead letters', fmtInt(p.dead_letters), 'dead_letters', p.dead_letters > 0 ? 'warn' : ''),
      stat('checkpoint took', p.commits > 0 ? fmtSeconds(p.last_checkpoint_seconds) : '–', 'last_checkpoint_seconds'),
      stat('commit took', p.commits > 0 ? fmtSeconds(p.last_commit_seconds) : '–', 'last_commit_seconds'),
      stat('commit interval', fmtSeconds(p.commit_interval_ms / 1000), 'commit_interval'),
      stat('restarts', fmtInt(p.restarts), 'restarts', p.restarts > 0 ? 'warn' : ''),
      p.upserts ? stat('keys', fmtInt(p.upserts.keys), 'keys') : stat('read', fmtInt(p.records_read), 'records_read')),
    sparkline('throughput (committed)', r, fmtRate),
    sparkline('freshness', h.map(x => ({ t: x.t, v: x.freshness })), fmtSeconds),
    sparkline('lag (records)', h.map(x => ({ t: x.t, v: x.lag })), fmtInt))
  if (p.last_error) card.append(el('p', { class: 'error', 'data-field': 'last_error' }, p.last_error))
  return card
}

function tableCard(t) {
  const slo = t.slo_max_files_per_partition
  const worst = t.max_partition_files
  const fillBar = el('div')
  fillBar.style.width = `${slo ? Math.min(100, 100 * (worst ?? 0) / slo).toFixed(1) : 0}%`
  const meter = el('div', { class: 'meter' + (t.partitions_over_slo > 0 ? ' bad' : '') }, fillBar)
  const card = el('div', { class: 'card', 'data-testid': 'table-' + t.name },
    el('div', { class: 'title' }, el('h3', {}, t.name),
      t.slo_breached ? el('span', { class: 'badge bad' }, 'SLO breached') : el('span', { class: 'badge good' }, 'within SLO')),
    el('div', { class: 'sub' }, `worst partition ${fmtInt(worst)} files of ${fmtInt(slo)} allowed`
      + (t.commit_slowdown > 1 ? ` · commits slowed ${t.commit_slowdown}x` : '')),
    meter,
    el('div', { class: 'stats' },
      stat('data files', fmtInt(t.data_files), 'data_files'),
      stat('small files', fmtInt(t.small_files), 'small_files'),
      stat('delete files', fmtInt(t.delete_files), 'delete_files'),
      stat('data', fmtBytes(t.data_bytes), 'data_bytes'),
      stat('partitions', fmtInt(t.partitions), 'partitions'),
      stat('over SLO', fmtInt(t.partitions_over_slo), 'partitions_over_slo', t.partitions_over_slo > 0 ? 'bad' : ''),
      stat('snapshots', fmtInt(t.snapshots), 'snapshots'),
      stat('compactions', fmtInt(t.compactions), 'compactions'),
      stat('expired', fmtInt(t.snapshots_expired), 'snapshots_expired')))
  if (t.worst_partitions?.length) {
    card.append(el('div', { class: 'scroll' }, el('table', {},
      el('thead', {}, el('tr', {}, el('th', {}, 'partition'), el('th', {}, 'files'), el('th', {}, 'small'), el('th', {}, 'deletes'), el('th', {}, 'bytes'))),
      el('tbody', {}, ...t.worst_partitions.map(p => el('tr', {},
        el('td', {}, p.partition || '(unpartitioned)'), el('td', {}, fmtInt(p.data_files)), el('td', {}, fmtInt(p.small_files)),
        el('td', {}, fmtInt(p.delete_files)), el('td', {}, fmtBytes(p.data_bytes))))))))
  }
  if (t.recent_snapshots?.length) {
    card.append(el('div', { class: 'scroll' }, el('table', { 'data-field': 'recent_snapshots' },
      el('thead', {}, el('tr', {}, el('th', {}, 'snapshot'), el('th', {}, 'when'), el('th', {}, 'operation'), el('th', {}, '+rows'), el('th', {}, '−rows'))),
      el('tbody', {}, ...t.recent_snapshots.map(s => el('tr', {},
        el('td', {}, s.snapshot_id), el('td', {}, fmtAgo(s.timestamp_ms)), el('td', {}, s.operation),
        el('td', {}, fmtInt(s.added_records)), el('td', {}, fmtInt(s.deleted_records))))))))
  }
  if (t.last_error) card.append(el('p', { class: 'error' }, t.last_error))
  return card
}

function streamCard(s) {
  return el('div', { class: 'card', 'data-testid': 'stream-' + s.name },
    el('div', { class: 'title' }, el('h3', {}, s.name),
      s.healthy ? el('span', { class: 'badge good' }, 'healthy') : el('span', { class: 'badge bad' }, 'failing')),
    el('div', { class: 'stats' },
      stat('end offset', fmtInt(s.end_offset), 'end_offset'),
      stat('start offset', fmtInt(s.start_offset), 'start_offset'),
      stat('segments', fmtInt(s.segments), 'segments')),
    s.error ? el('p', { class: 'error' }, s.error) : '')
}

function fill(id, items, make, empty) {
  const box = $(id)
  box.replaceChildren(...(items.length ? items.map(make) : [el('p', { class: 'empty' }, empty)]))
}

function render(status) {
  const now = Date.now()
  const state = $('state')
  state.textContent = status.error ? 'failed' : status.state
  state.className = 'badge ' + (status.error ? 'bad' : status.state === 'running' ? 'good' : 'warn')
  $('uptime').textContent = fmtSeconds(status.uptime_seconds)
  $('updated').textContent = 'updated ' + new Date(now).toLocaleTimeString()
  const err = $('error')
  err.hidden = !status.error
  err.textContent = status.error || ''
  fill('pipelines', status.pipelines || [], p => pipelineCard(p, now), 'No pipelines.')
  fill('tables', status.tables || [], tableCard, 'No table assessed yet.')
  fill('streams', status.streams || [], streamCard, 'No HTTP streams.')
  document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1)
}

async function poll(gen = generation) {
  if (gen !== generation) return
  try {
    const res = await fetch('/v1/status', {
      cache: 'no-store', headers: token ? { Authorization: 'Bearer ' + token } : {},
    })
    if (res.status === 401) {
      $('token-form').hidden = false
      $('state').textContent = 'token needed'
      $('state').className = 'badge warn'
      return  // polling resumes once a token is given
    }
    if (!res.ok) throw new Error(`/v1/status answered ${res.status}`)
    const status = await res.json()
    if (gen !== generation) return
    render(status)
  } catch (e) {
    const state = $('state')
    state.textContent = 'unreachable'
    state.className = 'badge bad'
    $('updated').textContent = String(e.message || e)
  }
  if (gen === generation) timer = setTimeout(() => poll(gen), POLL_MS)
}

// Asks for the token first when the server wants one (its /healthz says so),
// rather than being refused.
async function start() {
  if (!token) {
    try {
      const health = await fetch('/healthz', { cache: 'no-store' })
      if (health.headers.get('x-sluice-auth') === 'bearer') {
        $('token-form').hidden = false
        $('state').textContent = 'token needed'
        $('state').className = 'badge warn'
        return
      }
    } catch {}
  }
  poll()
}

$('token-form').addEventListener('submit', ev => {
  ev.preventDefault()
  token = $('token').value
  sessionStorage.setItem('sluice-token', token)
  $('token-form').hidden = true
  clearTimeout(timer)
  generation++
  poll()
})

start()
