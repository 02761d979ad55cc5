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
