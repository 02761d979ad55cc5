// A value as text both readers agree on: integers and bigints as decimal text,
// timestamps as epoch milliseconds, other numbers to 15 significant digits.
export function norm(v) {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'bigint') return v.toString()
  if (v instanceof Date) return `t${v.getTime()}`
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toPrecision(15)
  return JSON.stringify(v)
}

// Compares two readers' rows as sorted multisets of row keys (text both sides
// normalize to) and prints "ok"/"FAIL" with the first difference. True when
// they are equal and not empty.
export function sameRows(name, ours, theirs) {
  const a = [...ours].sort()
  const b = [...theirs].sort()
  const same = a.length === b.length && a.every((x, i) => x === b[i])
  if (same && a.length > 0) {
    console.log(`ok   ${name}: ${a.length} rows identical`)
    return true
  }
  console.log(`FAIL ${name}: sluice ${a.length} rows, icebird ${b.length} rows`)
  const i = a.findIndex((x, j) => x !== b[j])
  const at = i >= 0 ? i : Math.min(a.length, b.length)
  console.log(`  first difference at sorted row ${at}:\n    sluice:  ${a[at]}\n    icebird: ${b[at]}`)
  return false
}
