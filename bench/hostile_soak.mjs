// Hostile-client soak (bench/hostile_soak.sh runs it against `sluice run`): IDLE
// connections that send nothing, SLOW ones that trickle a header line every second,
// BAD ones that send malformed or smuggling requests in a loop, while one producer
// POSTs numbered events in batches with an Idempotency-Key per batch, retrying until
// acknowledged. Prints the producer's latency percentiles and the acknowledged ids
// (to stdout as "acked FIRST LAST" lines) for the shell script to check against the
// table. Usage: node hostile_soak.mjs PORT IDLE SLOW BAD BATCHES BATCH_SIZE
import net from 'node:net';
import http from 'node:http';

const [port, idleN, slowN, badN, batches, batchSize] = process.argv.slice(2).map(Number);
const sockets = [];
let stop = false;

function open(onConnect) {
  const s = net.connect({ port, host: '127.0.0.1' }, () => onConnect(s));
  s.on('error', () => {});
  s.on('data', () => {});
  sockets.push(s);
  return s;
}

// Idle: connect and say nothing (reconnect when the server closes them).
function idle() {
  const s = open(() => {});
  s.on('close', () => { if (!stop) setTimeout(idle, 100); });
}
// Slow: a request line, then one header line a second, forever.
function slow() {
  const s = open((c) => {
    c.write('POST /v1/streams/events_in/records HTTP/1.1\r\n');
    let i = 0;
    const t = setInterval(() => { if (!c.destroyed) c.write(`X-Slow-${i++}: 1\r\n`); }, 1000);
    c.on('close', () => { clearInterval(t); if (!stop) setTimeout(slow, 100); });
  });
}
// Bad: malformed framing and smuggling attempts, one per connection, in a loop.
const smuggled = '{"id":-1,"user_id":0,"kind":"smuggled","ts":"2024-01-01T00:00:00Z"}\n';
const inner = `POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`;
const badRequests = [
  `POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
  `POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n${inner}`,
  `POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0x9\r\n${inner}`,
  `POST /v1/streams/nope/records HTTP/1.1\r\nHost: h\r\nContent-Length: ${inner.length}\r\n\r\n${inner}`,
  `POST /v1/streams/events_in/records HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n${inner}`,
  `GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n${inner}`,
  `\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage that looks like TLS\r\n\r\n`,
];
let badSent = 0;
function bad() {
  const s = open((c) => { c.write(badRequests[badSent++ % badRequests.length]); });
  s.on('close', () => { if (!stop) setTimeout(bad, 10); });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function post(body, key) {
  return new Promise((resolve) => {
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', agent,
      path: '/v1/streams/events_in/records',
      headers: { 'Content-Type': 'application/x-ndjson', 'Idempotency-Key': key } }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, data }));
    });
    req.setTimeout(30000, () => req.destroy());
    req.on('error', () => resolve({ status: 0, data: '' }));
    req.end(body);
  });
}

for (let i = 0; i < idleN; i++) idle();
for (let i = 0; i < slowN; i++) slow();
for (let i = 0; i < badN; i++) bad();
await new Promise((r) => setTimeout(r, 2000));

const latencies = [];
let retries = 0;
for (let b = 0; b < batches; b++) {
  let body = '';
  for (let k = 0; k < batchSize; k++) {
    const id = b * batchSize + k;
    body += `{"id":${id},"user_id":${id % 100},"kind":"k","ts":"2024-01-01T00:00:00Z"}\n`;
  }
  const key = `soak-${b}`;
  for (;;) {
    const start = process.hrtime.bigint();
    const r = await post(body, key);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status === 200) {
      latencies.push(ms);
      console.log(`acked ${b * batchSize} ${b * batchSize + batchSize - 1}`);
      break;
    }
    retries++;
    await new Promise((res) => setTimeout(res, 50));
  }
}
stop = true;
for (const s of sockets) s.destroy();
agent.destroy();
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))].toFixed(1);
console.error(`producer: ${batches} batches of ${batchSize} acknowledged, ${retries} retries; ` +
  `latency ms p50 ${pct(0.5)} p99 ${pct(0.99)} max ${latencies[latencies.length - 1].toFixed(1)}; ` +
  `hostile clients: ${idleN} idle, ${slowN} slow, ${badN} bad (${badSent} bad requests sent)`);
process.exit(0);
