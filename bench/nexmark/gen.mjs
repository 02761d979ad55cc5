// A deterministic Nexmark-style event generator, after the Nexmark benchmark's generator
// (Beam's and Flink's nexmark GeneratorConfig / PersonGenerator / AuctionGenerator /
// BidGenerator), written as JSON lines for sluice's file source and DuckDB's read_json.
//   node bench/nexmark/gen.mjs N OUT_DIR [EVENTS_PER_SECOND] [SEED]
// writes events until N bids have been written:
//   OUT_DIR/bid/bids.jsonl          auction, bidder, price, channel, url, date_time, extra
//   OUT_DIR/person/persons.jsonl    id, name, email_address, credit_card, city, state,
//                                   date_time, extra
//   OUT_DIR/auction/auctions.jsonl  id, item_name, description, initial_bid, reserve,
//                                   date_time, expires, seller, category, extra
// and prints "events persons auctions bids first_ts last_ts" on stdout.
//
// As in Nexmark: event i (0-based) is a person when i % 50 < 1, an auction when < 4,
// else a bid (1:3:46). Person ids and auction ids count up from 1000. A bid is for a
// hot auction with probability 1/2 (the first of the latest batch of 100 auctions),
// else for one of the ~100 auctions in flight (plus a lead of 10 not created yet); its
// bidder is a hot bidder with probability 3/4 (the second of the latest batch of 100
// people), else one of the 1000 most recent people (plus a lead of 10). Prices are
// round(10^(6u) * 100), log-uniform in [100, 1e8). Half the bids come from 4 hot
// channels (Google, Facebook, Baidu, Apple), the rest from channel-0 .. channel-9999,
// each with its own url. `extra` pads each event to Nexmark's average sizes (bid 100,
// person 200, auction 500 bytes). Unlike nexmark-flink, the bidder id gets
// FIRST_PERSON_ID once (Beam's semantics; nexmark-flink adds it twice).
//
// Event time: event i is at 2024-01-01T00:00:00Z + i / EVENTS_PER_SECOND (default
// 100000) plus a jitter uniform in [0, 1 s), so events are up to 1 s out of order
// (sluice's watermark delay of 4 s covers it: no event is late). Timestamps print as
// "2024-01-01T00:00:01.123456Z" (microseconds, UTC).
import fs from 'node:fs';
import path from 'node:path';

const n = Number(process.argv[2]);
const outDir = process.argv[3];
const rate = Number(process.argv[4] ?? 100000);
const seed = Number(process.argv[5] ?? 20240101) >>> 0;
if (!(n >= 0) || !outDir || !(rate > 0)) {
  console.error('usage: gen.mjs N OUT_DIR [EVENTS_PER_SECOND] [SEED]');
  process.exit(2);
}

// xorshift128+ would need BigInt; mulberry32 is fast, seeded and good enough here.
let state = seed;
const u32 = () => {
  let t = (state = (state + 0x6d2b79f5) >>> 0);
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
};
const nextInt = (k) => u32() % k;                    // k well below 2^32: bias negligible
const nextDouble = () => u32() / 4294967296;
const nextLong = (k) => Math.floor(nextDouble() * k);  // k < 2^32 here

// Nexmark's constants.
const kPersonProportion = 1, kAuctionProportion = 3, kTotalProportion = 50;
const kFirstPersonId = 1000, kFirstAuctionId = 1000, kFirstCategoryId = 10, kNumCategories = 5;
const kNumActivePeople = 1000, kNumInFlightAuctions = 100;
const kPersonIdLead = 10, kAuctionIdLead = 10;
const kHotAuctionRatio = 2, kHotBiddersRatio = 4, kHotSellersRatio = 4;  // probabilities
const kHotAuctionBatch = 100, kHotBidderBatch = 100, kHotSellerBatch = 100;
const kAvgPersonBytes = 200, kAvgAuctionBytes = 500, kAvgBidBytes = 100;
const kHotChannelsRatio = 2, kChannels = 10000;

function lastBase0PersonId(e) {
  const epoch = Math.floor(e / kTotalProportion);
  let offset = e % kTotalProportion;
  if (offset >= kPersonProportion) offset = kPersonProportion - 1;
  return epoch * kPersonProportion + offset;
}
function nextBase0PersonId(e) {
  const numPeople = lastBase0PersonId(e) + 1;
  const active = Math.min(numPeople, kNumActivePeople);
  return numPeople - active + nextLong(active + kPersonIdLead);
}
function lastBase0AuctionId(e) {
  let epoch = Math.floor(e / kTotalProportion);
  let offset = e % kTotalProportion;
  if (offset < kPersonProportion) {  // a person: the last auction of the previous epoch
    epoch--;
    offset = kAuctionProportion - 1;
  } else if (offset >= kPersonProportion + kAuctionProportion) {  // a bid: this epoch's last
    offset = kAuctionProportion - 1;
  } else {  // an auction
    offset -= kPersonProportion;
  }
  return epoch * kAuctionProportion + offset;
}
function nextBase0AuctionId(e) {
  const maxAuction = lastBase0AuctionId(e);
  const minAuction = Math.max(maxAuction - kNumInFlightAuctions, 0);
  return minAuction + nextLong(maxAuction - minAuction + 1 + kAuctionIdLead);
}
const nextPrice = () => Math.round(Math.pow(10, nextDouble() * 6) * 100);

// Random text: slices of a seeded pool of lowercase letters with a space every ~13
// characters, so strings cost a substring rather than a loop per character.
const kPoolSize = 1 << 20;
const pool = (() => {
  const b = Buffer.alloc(kPoolSize);
  for (let i = 0; i < kPoolSize; ++i) {
    const r = u32();
    b[i] = r % 13 === 0 ? 0x20 : 0x61 + ((r >>> 8) % 26);
  }
  return b.toString('latin1');
})();
const exactString = (len) => {
  const at = nextInt(kPoolSize - len);
  return pool.substring(at, at + len);
};
const kMinStringLength = 3;
const nextString = (maxLength) =>
    exactString(kMinStringLength + nextInt(maxLength - kMinStringLength));
const letters = (len) => {
  let s = '';
  for (let i = 0; i < len; ++i) s += String.fromCharCode(0x61 + nextInt(26));
  return s;
};
function nextExtra(currentSize, desiredAverageSize) {
  if (currentSize > desiredAverageSize) return '';
  const avg = desiredAverageSize - currentSize;
  const delta = Math.round(avg * 0.2);
  const minSize = avg - delta;
  return exactString(minSize + (delta === 0 ? 0 : nextInt(2 * delta)));
}

const baseUrl = () => `https://www.nexmark.com/${letters(3 + nextInt(3))}/${
    letters(3 + nextInt(3))}/${letters(3 + nextInt(3))}/item.htm?query=1`;
const kHotChannels = ['Google', 'Facebook', 'Baidu', 'Apple'];
const kHotUrls = kHotChannels.map(() => baseUrl());
const reverse32 = (x) => {
  let r = 0;
  for (let i = 0; i < 32; ++i) r = (r << 1) | ((x >>> i) & 1);
  return r | 0;
};
const channelUrls = new Array(kChannels);  // filled on first use, from the main stream
const channelUrl = (i) => {
  if (channelUrls[i] === undefined) {
    let url = baseUrl();
    if (nextInt(10) > 0) url += `&channel_id=${Math.abs(reverse32(i))}`;
    channelUrls[i] = url;
  }
  return channelUrls[i];
};

const kFirstNames =
    ['Peter', 'Paul', 'Luke', 'John', 'Saul', 'Vicky', 'Kate', 'Julie', 'Sarah', 'Deiter', 'Walter'];
const kLastNames =
    ['Shultz', 'Abrams', 'Spencer', 'White', 'Bartels', 'Walton', 'Smith', 'Jones', 'Noris'];
const kCities = [
  'Phoenix', 'Los Angeles', 'San Francisco', 'Boise', 'Portland', 'Bend', 'Redmond', 'Seattle',
  'Kent', 'Cheyenne'
];
const kStates = ['AZ', 'CA', 'ID', 'OR', 'WA', 'WY'];

// Timestamps: "YYYY-MM-DDTHH:MM:SS.ffffffZ" from epoch microseconds, the text up to the
// second cached (events come in nearly increasing time order).
const baseMicros = Date.UTC(2024, 0, 1) * 1000;
const interEventMicros = 1e6 / rate;
let cachedSecond = -1, cachedPrefix = '';
const formatTs = (micros) => {
  const second = Math.floor(micros / 1e6);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19);
  }
  const frac = micros - second * 1e6;
  return `${cachedPrefix}.${String(frac).padStart(6, '0')}Z`;
};

class Out {
  constructor(file) {
    fs.mkdirSync(path.dirname(file), {recursive: true});
    this.fd = fs.openSync(file, 'w');
    this.buf = '';
    this.count = 0;
  }
  add(line) {
    this.buf += line;
    if (++this.count % 8192 === 0 && this.buf.length > (4 << 20)) this.flush();
  }
  flush() {
    fs.writeSync(this.fd, this.buf);
    this.buf = '';
  }
  close() {
    this.flush();
    fs.closeSync(this.fd);
  }
}
const bids = new Out(path.join(outDir, 'bid', 'bids.jsonl'));
const persons = new Out(path.join(outDir, 'person', 'persons.jsonl'));
const auctions = new Out(path.join(outDir, 'auction', 'auctions.jsonl'));

let e = 0, firstTs = '', lastTs = '';
for (; bids.count < n; ++e) {
  const micros = baseMicros + Math.floor(e * interEventMicros) + nextInt(1000000);
  const ts = formatTs(micros);
  if (e === 0) firstTs = ts;
  lastTs = ts;
  const rem = e % kTotalProportion;
  if (rem < kPersonProportion) {
    const id = lastBase0PersonId(e) + kFirstPersonId;
    const name = `${kFirstNames[nextInt(kFirstNames.length)]} ${
        kLastNames[nextInt(kLastNames.length)]}`;
    const email = `${letters(7)}@${letters(5)}.com`;
    const cc = `${String(nextInt(10000)).padStart(4, '0')} ${
        String(nextInt(10000)).padStart(4, '0')} ${String(nextInt(10000)).padStart(4, '0')} ${
        String(nextInt(10000)).padStart(4, '0')}`;
    const city = kCities[nextInt(kCities.length)];
    const st = kStates[nextInt(kStates.length)];
    const extra = nextExtra(
        8 + name.length + email.length + cc.length + city.length + st.length, kAvgPersonBytes);
    persons.add(`{"id":${id},"name":"${name}","email_address":"${email}","credit_card":"${
        cc}","city":"${city}","state":"${st}","date_time":"${ts}","extra":"${extra}"}\n`);
  } else if (rem < kPersonProportion + kAuctionProportion) {
    const id = lastBase0AuctionId(e) + kFirstAuctionId;
    const seller = (nextInt(kHotSellersRatio) > 0 ?
                        Math.floor(lastBase0PersonId(e) / kHotSellerBatch) * kHotSellerBatch :
                        nextBase0PersonId(e)) +
        kFirstPersonId;
    const category = kFirstCategoryId + nextInt(kNumCategories);
    const initialBid = nextPrice();
    const reserve = initialBid + nextPrice();
    // Nexmark's auction length: on average the time until numInFlightAuctions more
    // auctions have been created.
    const horizonMicros =
        Math.floor(kNumInFlightAuctions * kTotalProportion / kAuctionProportion) * interEventMicros;
    const expires = formatTs(micros + 1000 + nextLong(Math.max(2 * horizonMicros, 1000)));
    const itemName = nextString(20);
    const description = nextString(100);
    const extra = nextExtra(8 + itemName.length + description.length + 8 + 8 + 8 + 8 + 8,
                            kAvgAuctionBytes);
    auctions.add(`{"id":${id},"item_name":"${itemName}","description":"${
        description}","initial_bid":${initialBid},"reserve":${reserve},"date_time":"${
        ts}","expires":"${expires}","seller":${seller},"category":${category},"extra":"${
        extra}"}\n`);
  } else {
    const auction = (nextInt(kHotAuctionRatio) > 0 ?
                         Math.floor(lastBase0AuctionId(e) / kHotAuctionBatch) * kHotAuctionBatch :
                         nextBase0AuctionId(e)) +
        kFirstAuctionId;
    const bidder = (nextInt(kHotBiddersRatio) > 0 ?
                        Math.floor(lastBase0PersonId(e) / kHotBidderBatch) * kHotBidderBatch + 1 :
                        nextBase0PersonId(e)) +
        kFirstPersonId;
    const price = nextPrice();
    let channel, url;
    if (nextInt(kHotChannelsRatio) > 0) {
      const i = nextInt(kHotChannels.length);
      channel = kHotChannels[i];
      url = kHotUrls[i];
    } else {
      const i = nextInt(kChannels);
      channel = `channel-${i}`;
      url = channelUrl(i);
    }
    const extra = nextExtra(8 + 8 + 8 + 8, kAvgBidBytes);
    bids.add(`{"auction":${auction},"bidder":${bidder},"price":${price},"channel":"${
        channel}","url":"${url}","date_time":"${ts}","extra":"${extra}"}\n`);
  }
}
bids.close();
persons.close();
auctions.close();
console.log(`${e} ${persons.count} ${auctions.count} ${bids.count} ${firstTs} ${lastTs}`);
