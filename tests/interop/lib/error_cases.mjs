// Bad input to `sluice parquet write`: it must fail (non-zero exit), name the
// offending line in its message, and leave no output file behind.
import fs from 'node:fs';
import path from 'node:path';

const kSchema = 'id BIGINT NOT NULL, a INT, d DECIMAL(5,2), ts TIMESTAMPTZ, l ARRAY<INT NOT NULL>';
const kGood = '{"id":1,"a":1,"d":"1.00","ts":"2024-01-01T00:00:00.000000+00:00","l":[1]}';

// [what, bad line, line number it is on]
const kCases = [
  ['string for BIGINT', '{"id":"x","a":1}'],
  ['null in a NOT NULL column', '{"id":null,"a":1}'],
  ['INT overflow', '{"id":1,"a":2147483648}'],
  ['BIGINT overflow', '{"id":9223372036854775808}'],
  ['too many decimal digits', '{"id":1,"d":"1.234"}'],
  ['decimal over its precision', '{"id":1,"d":"1000.00"}'],
  ['bad timestamp', '{"id":1,"ts":"2024-13-01T00:00:00+00:00"}'],
  ['null list element declared NOT NULL', '{"id":1,"l":[1,null]}'],
  ['truncated JSON', '{"id":1,"a":'],
  ['not an object', '[1,2]'],
];

export async function CheckWriteErrors(sluice, tmp) {
  const errors = [];
  for (const [k, [what, bad]] of kCases.entries()) {
    const lineNo = 2 + (k % 3);  // the bad line is line 2, 3 or 4
    const lines = [...Array(lineNo - 1).fill(kGood), bad, kGood];
    const out = path.join(tmp, `bad${k}.parquet`);
    const r = sluice.WriteRaw(kSchema, lines.join('\n') + '\n', out);
    const problems = [];
    if (r.code === 0) problems.push('exit code 0');
    if (!new RegExp(`line ${lineNo}\\b`).test(r.stderr))
      problems.push(`message does not say "line ${lineNo}"`);
    if (fs.existsSync(out)) problems.push('output file left behind');
    if (problems.length)
      errors.push(`${what} on line ${lineNo}: ${problems.join(', ')} (stderr: ${r.stderr.trim()})`);
  }
  if (errors.length)
    throw new Error(`bad input to sluice parquet write:\n    ${errors.join('\n    ')}`);
}

// Files sluice cannot or must not read: `sluice parquet cat` has to fail
// cleanly (exit 1, the file named in the message), never crash; with bytes
// flipped it may also succeed (the damage can hit unchecked data) but must not
// crash either.
export async function CheckReadErrors(sluice, conn, tmp, rng) {
  const errors = [];
  const good = path.join(tmp, 'rd_good.parquet');
  await conn.run(
      `COPY (SELECT i::BIGINT AS a, 'x' || i AS s, [i, i + 1] AS l FROM range(2000) t(i)) ` +
      `TO '${good}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 500)`);
  const brotli = path.join(tmp, 'rd_brotli.parquet');
  await conn.run(
      `COPY (SELECT i::BIGINT AS a FROM range(10) t(i)) TO '${brotli}' ` +
      `(FORMAT parquet, COMPRESSION brotli)`);
  const bytes = fs.readFileSync(good);
  const variants = [
    ['BROTLI pages', brotli, /BROTLI/i],
    ['truncated to half', bytes.subarray(0, bytes.length >> 1), null],
    [
      'footer length too large', Buffer.concat([
        bytes.subarray(0, bytes.length - 8), Buffer.from([0xff, 0xff, 0xff, 0x7f]),
        Buffer.from('PAR1')
      ]),
      null
    ],
    ['no magic', Buffer.from('not a parquet file at all, just text\n'), null],
    ['empty file', Buffer.alloc(0), null],
  ];
  for (const [what, content, pattern] of variants) {
    let file = content;
    if (typeof content !== 'string') {
      file = path.join(tmp, `rd_${what.replaceAll(' ', '_')}.parquet`);
      fs.writeFileSync(file, content);
    }
    const r = sluice.CatRaw(file);
    if (r.code !== 1 || !r.stderr.includes(file) || (pattern && !pattern.test(r.stderr))) {
      errors.push(`${what}: exit ${r.code ?? r.signal}, stderr: ${r.stderr.trim().slice(0, 300)}`);
    }
  }
  for (let k = 0; k < 30; ++k) {  // flipped bytes: exit 0 or 1, never a crash
    const damaged = Buffer.from(bytes);
    const at = rng.int(4, damaged.length - 9);
    damaged[at] ^= 1 << rng.int(0, 7);
    const file = path.join(tmp, `rd_flip${k}.parquet`);
    fs.writeFileSync(file, damaged);
    const r = sluice.CatRaw(file);
    if (r.code !== 0 && r.code !== 1) {
      errors.push(`byte ${at} flipped: exit ${r.code ?? r.signal} (${file} kept)`);
    } else {
      fs.rmSync(file);
    }
  }
  if (errors.length)
    throw new Error(`damaged input to sluice parquet cat:\n    ${errors.join('\n    ')}`);
}
