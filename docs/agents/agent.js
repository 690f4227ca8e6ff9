// A lockstep agent in plain JavaScript: Node 20, no packages, only the global fetch.
//
// It shows that an arena agent is plain HTTP + JSON in any language (docs/api.md,
// "Lockstep"). It asks to be woken once a minute by the server's timer, and every EVERY_MIN
// minutes buys about USD dollars of COIN through the ask with an IOC, or, when it holds
// some, sells it back through the bid with a reduce-only IOC.
//
//   arena backtest --agent "node docs/agents/agent.js" recordings/synth-3coins-20261201.jsonl.gz
//
// arena backtest --agent sets ARENA_URL and ARENA_KEY; against `arena host --replay LOG
// --lockstep`, set them to the URL and the key it prints.

const BASE = process.env.ARENA_URL ?? "http://127.0.0.1:8000";
const KEY = process.env.ARENA_KEY;
const COIN = process.env.COIN ?? "BTC";
const EVERY_MIN = Number(process.env.EVERY_MIN ?? 5);
const USD = Number(process.env.USD ?? 15);
const IOC = 3;

async function call(method, path, body) {
  const r = await fetch(BASE + path, {
    method,
    headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, json: await r.json() };
}

async function trade(market) {
  const account = await call("GET", "/v1/account");
  const book = await call("GET", `/v1/book/${COIN}`);
  // 429: over the rate limit (counted in simulated time): skip this step, waiting moves no clock
  if (account.status !== 200 || book.status !== 200) return;
  const pos = account.json.positions.find((p) => p.coin === COIN)?.sz ?? 0;
  const [bids, asks] = book.json.levels;
  if (!bids.length || !asks.length || book.json.stale) return;
  let order;
  if (pos > 0) {
    // whole dollars are always on the price grid
    const px = Math.floor(Number(bids[0].px) * 0.999);
    order = { isBuy: false, limitPx: px * 1e8, sz: pos, reduceOnly: true };
  } else if (pos === 0) {
    const px = Math.ceil(Number(asks[0].px) * 1.001);
    const lot = 10 ** (8 - market.szDecimals); // sizes are whole lots, at 1e8
    const sz = Math.ceil((USD * 1e8) / px / lot) * lot;
    order = { isBuy: true, limitPx: px * 1e8, sz, reduceOnly: false };
  } else {
    return;
  }
  // the answer comes once the engine has applied the order, in simulated time
  const r = await call("POST", "/v1/orders", { asset: market.asset, encodedTif: IOC, ...order });
  const what = `${order.isBuy ? "buy" : "sell"} ${order.sz / 1e8} ${COIN} at ${order.limitPx / 1e8}`;
  console.log(r.status === 200 ? `${what}: oid ${r.json.oid}` : `${what}: ${r.json.error}`);
}

async function step(body) {
  const r = await call("POST", "/v1/step", body);
  if (r.status !== 200) throw new Error(`POST /v1/step: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

async function main() {
  if (!KEY) throw new Error("set ARENA_KEY (and ARENA_URL)");
  const season = (await call("GET", "/v1/season")).json;
  const market = season.markets.find((m) => m.coin === COIN);
  // the first step: no step is done yet; wake me by the timer only, once a minute
  const wake = { coins: [], channels: [], events: false, marks: false, every_ms: 60000 };
  let now = await step({ done: null, wake });
  let steps = 0;
  while (!now.over) {
    steps += 1;
    if (now.why.includes("timer") && Math.floor(now.t / 60000) % EVERY_MIN === 0) {
      await trade(market);
    }
    now = await step({ done: now.step }); // done with it; wait for the next
  }
  console.log(`over after ${steps} steps`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
