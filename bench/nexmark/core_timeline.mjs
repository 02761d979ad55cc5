// What ran on the cores during a pipeline run, from the scheduler's switches:
//   perf record -e sched:sched_switch -a -o sw.data -- sluice ... run q5.sql --bounded
//   perf script -i sw.data | node bench/nexmark/core_timeline.mjs [BIN_SECONDS]
// Prints, for the span from the first to the last switch of a sluice thread
// (a name "role:pipeline", docs/pipelines.md), each bin's busy share of all
// cores per thread role (pipe, lane, window, write, shard, commit...; "idle"
// is the idle task), then how the span divides: every core busy, or a core
// idle and what ran on the others (the thread a pipeline waited on).
import { createInterface } from 'node:readline';

const bin = Number(process.argv[2] || 0.1);
const line = /\[(\d+)\]\s+([\d.]+):\s+(?:sched:sched_switch:\s+)?prev_comm=.*? prev_pid=\d+ .*?==> next_comm=(.*?) next_pid=\d+/;
const switches = [];  // [time, cpu, the thread switched to]
for await (const text of createInterface({ input: process.stdin })) {
  const m = line.exec(text);
  if (m) switches.push([Number(m[2]), Number(m[1]), m[3]]);
}
const ours = switches.filter(([, , next]) => next.includes(':'));
if (ours.length === 0) {
  console.error('no switch to a sluice thread (names "role:pipeline") in the input');
  process.exit(1);
}
const start = ours[0][0], end = ours[ours.length - 1][0];
const cpus = new Set(switches.map(([, cpu]) => cpu)).size;
// "lane2:q5" -> "lane", "swapper/1" -> "idle", "kworker/0:1H" -> "kworker".
const role = (comm) => comm.startsWith('swapper') ? 'idle' : comm.split(/[:/]/)[0].replace(/\d+$/, '');

const perBin = new Map();  // bin -> role -> seconds
const add = (who, from, to) => {
  for (let t = Math.max(from, start); t < Math.min(to, end);) {
    const b = Math.floor((t - start) / bin);
    const stop = Math.min(to, end, start + (b + 1) * bin);
    const roles = perBin.get(b) || new Map();
    roles.set(who, (roles.get(who) || 0) + (stop - t));
    perBin.set(b, roles);
    if (stop <= t) break;
    t = stop;
  }
};
const running = new Map();  // cpu -> [role, since]
const split = new Map();    // "every core busy" | "idle core, ran: ROLES" -> seconds
let last = null;
for (const [t, cpu, next] of switches) {
  if (last !== null && running.size === cpus && t > start && last < end) {
    const roles = [...running.values()].map(([r]) => r);
    const busy = roles.filter((r) => r !== 'idle').sort();
    const key = busy.length === cpus ? 'every core busy'
      : busy.length === 0 ? 'every core idle' : `idle core, ran: ${busy.join(' + ')}`;
    const span = Math.min(t, end) - Math.max(last, start);
    if (span > 0) split.set(key, (split.get(key) || 0) + span);
  }
  const was = running.get(cpu);
  if (was) add(was[0], was[1], t);
  running.set(cpu, [role(next), t]);
  last = t;
}

const roles = ['pipe', 'lane', 'window', 'write', 'shard', 'commit', 'close', 'idle'];
console.log(`${(end - start).toFixed(3)} s on ${cpus} cores; per bin of ${bin} s, % of all cores:`);
console.log(['bin s', ...roles, 'other'].map((h) => h.padStart(7)).join(''));
for (const [b, got] of [...perBin].sort((x, y) => x[0] - y[0])) {
  const pct = (s) => (100 * s / (bin * cpus)).toFixed(0).padStart(7);
  let other = 0;
  for (const [r, s] of got) if (!roles.includes(r)) other += s;
  console.log((b * bin).toFixed(1).padStart(7) + roles.map((r) => pct(got.get(r) || 0)).join('') + pct(other));
}
const total = [...split.values()].reduce((a, b) => a + b, 0);
console.log('\nthe span:');
for (const [key, s] of [...split].sort((x, y) => y[1] - x[1]).slice(0, 12)) {
  console.log(`${(1000 * s).toFixed(0).padStart(7)} ms ${(100 * s / total).toFixed(1).padStart(5)} %  ${key}`);
}
