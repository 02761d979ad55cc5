// Text forms of values (Iceberg JSON single-value forms) and strict parsers,
// written independently of sluice's C++ code. Internal representations:
// date = days (number), time = µs (BigInt), timestamps = µs or ns (BigInt),
// decimal = unscaled BigInt, binary/fixed = lowercase hex, uuid = canonical text.

export function DaysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function CivilFromDays(z) {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
      (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [era * 400 + yoe + (m <= 2 ? 1 : 0), m, d];
}

const pad = (v, n) => String(v).padStart(n, '0');

export function FormatDate(days) {
  const [y, m, d] = CivilFromDays(days);
  return `${y < 0 ? '-' : ''}${pad(Math.abs(y), 4)}-${pad(m, 2)}-${pad(d, 2)}`;
}

function FormatTimeOfDay(units, perSecond, digits) {
  const secs = units / perSecond;
  const frac = units % perSecond;
  return `${pad(secs / 3600n, 2)}:${pad((secs / 60n) % 60n, 2)}:${pad(secs % 60n, 2)}.` +
      pad(frac, digits);
}

export function FormatTime(micros) {
  return FormatTimeOfDay(micros, 1000000n, 6);
}

// `sep` is 'T' for Iceberg JSON and ' ' for SQL literals.
export function FormatTimestamp(v, nanos, utc, sep = 'T', zone = '+00:00') {
  const perSecond = nanos ? 1000000000n : 1000000n;
  const perDay = perSecond * 86400n;
  let days = v / perDay;
  let rem = v % perDay;
  if (rem < 0n) {
    rem += perDay;
    days -= 1n;
  }
  return `${FormatDate(Number(days))}${sep}${FormatTimeOfDay(rem, perSecond, nanos ? 9 : 6)}` +
      (utc ? zone : '');
}

export function FormatDecimal(unscaled, scale) {
  const neg = unscaled < 0n;
  let digits = (neg ? -unscaled : unscaled).toString();
  if (scale === 0) return (neg ? '-' : '') + digits;
  digits = digits.padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

export function FormatUuid(buf) {
  const h = buf.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// Strict parsers: return undefined when `s` is not exactly in the form.
export function ParseDate(s) {
  const m = /^(-?\d{4,})-(\d\d)-(\d\d)$/.exec(s);
  if (!m) return undefined;
  const days = DaysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
  return FormatDate(days) === s ? days : undefined;
}

function ParseTimeOfDay(s, digits) {
  const m = new RegExp(`^(\\d\\d):(\\d\\d):(\\d\\d)\\.(\\d{${digits}})$`).exec(s);
  if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3]) > 59) return undefined;
  const perSecond = 10n ** BigInt(digits);
  return (BigInt(m[1]) * 3600n + BigInt(m[2]) * 60n + BigInt(m[3])) * perSecond + BigInt(m[4]);
}

export function ParseTime(s) {
  return ParseTimeOfDay(s, 6);
}

export function ParseTimestamp(s, nanos, utc) {
  const suffix = '+00:00';
  if (utc !== s.endsWith(suffix)) return undefined;
  if (utc) s = s.slice(0, -suffix.length);
  const t = s.indexOf('T');
  if (t < 0) return undefined;
  const days = ParseDate(s.slice(0, t));
  const tod = ParseTimeOfDay(s.slice(t + 1), nanos ? 9 : 6);
  if (days === undefined || tod === undefined) return undefined;
  return BigInt(days) * 86400n * (nanos ? 1000000000n : 1000000n) + tod;
}

export function ParseDecimal(s, scale) {
  const m =
      scale === 0 ? /^(-?)(\d+)$/.exec(s) : new RegExp(`^(-?)(\\d+)\\.(\\d{${scale}})$`).exec(s);
  if (!m) return undefined;
  const v = BigInt(m[2] + (m[3] ?? ''));
  return m[1] ? -v : v;
}
