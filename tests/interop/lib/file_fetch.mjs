// icebird reads through the global fetch(); the warehouses of the tests are
// local folders. serveFiles() installs a fetch() that answers file:// URLs
// (and plain paths) from disk: HEAD with content-length, GET whole or by
// Range. `remaps()` gives [from, to] prefixes, for tables whose metadata names
// another machine's paths (the fixtures).
import { readFileSync, statSync } from 'node:fs'

export function serveFiles(remaps = () => []) {
  globalThis.fetch = async (url, init = {}) => {
    let path = String(url)
    for (const [from, to] of remaps()) {
      if (path.startsWith(from)) { path = to + path.slice(from.length); break }
    }
    if (!path.startsWith('file:') && !path.startsWith('/')) throw new Error(`unexpected URL ${url}`)
    path = decodeURIComponent(path.replace(/^file:\/\//, '').replace(/^file:/, ''))
    let size
    try {
      size = statSync(path).size
    } catch {
      return new Response(null, { status: 404, statusText: 'Not Found' })
    }
    if ((init.method ?? 'GET') === 'HEAD') {
      return new Response(null, { status: 200, headers: { 'content-length': String(size) } })
    }
    const data = readFileSync(path)
    const range = new Headers(init.headers ?? {}).get('range')
    if (!range) return new Response(data, { status: 200, headers: { 'content-length': String(size) } })
    const m = /bytes=(\d+)-(\d*)/.exec(range)
    const start = Number(m[1])
    const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
    return new Response(data.subarray(start, end + 1), {
      status: 206, headers: { 'content-length': String(end - start + 1) },
    })
  }
}
