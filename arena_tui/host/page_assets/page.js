"use strict";
// The season page's script: reads the host's public endpoints every few seconds and shows
// what they serve. Every served string goes into the page as text (textContent), never as
// markup; the score rows keep the order and the values /v1/scores serves.
(function () {
  const C = JSON.parse(document.getElementById("season-data").textContent);
  const $ = (id) => document.getElementById(id);
  const coins = new Map(C.markets.map((m) => [m.asset, m.coin]));
  const state = { lastDay: null, picked: null, fills: [], lastFillT: 0, fillsOf: null, seen: new Set() };

  function cell(text, cls) {
    const td = document.createElement("td");
    td.textContent = text === null || text === undefined ? "" : String(text);
    if (cls) td.className = cls;
    return td;
  }
  function raw(td, value) {
    td.dataset.raw = JSON.stringify(value);
    return td;
  }
  function clock(ms) {
    if (ms === null || ms === undefined) return "";
    return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "");
  }
  function fixed(n, scale, digits) {
    return (n / scale).toLocaleString("en-US", {
      minimumFractionDigits: digits, maximumFractionDigits: digits,
    });
  }
  const usd = (e6) => fixed(e6, 1e6, 2);
  const pct = (e8) => fixed(e8, 1e6, 2) + "%";  // a ratio at 1e8, as a percentage
  const px = (e8) => fixed(e8, 1e8, 2);
  const size = (e8) => (e8 / 1e8).toString();
  function secs(ms) { return (ms / 1000).toFixed(1) + " s"; }

  async function get(path, headers) {
    const r = await fetch(path, { headers: headers || {}, cache: "no-store" });
    return r;
  }
  async function json(path) {
    const r = await get(path);
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return r.json();
  }

  function header(season) {
    $("title").textContent = "arena season " + C.id;
    const paper = season ? season.paper : C.paper;
    $("paper").textContent = paper ? "PAPER: scores are paper trading, no money at stake" : "";
    $("paper").hidden = !paper;
    $("rules").textContent = season ? season.rules_sha256 : C.rules_sha256;
    $("window").textContent = clock(C.start) + " to " + clock(C.end);
    if (season) {
      $("state").textContent = season.state;
      $("now").textContent = clock(season.t);
    }
  }

  function scores(doc) {
    const body = $("scores-body");
    const rows = doc.rows;
    let day = null;
    for (const r of rows) if (day === null || r.day > day) day = r.day;
    const latest = rows.filter((r) => r.day === day);  // served order kept
    $("day").textContent = day === null ? "no day yet" : clock(day * 86400000).slice(0, 10);
    $("final").textContent = doc.final ? "final" : "provisional";
    const out = [];
    for (const r of latest) {
      const tr = document.createElement("tr");
      tr.dataset.entry = r.entry;
      tr.append(
        raw(cell(r.rank), r.rank),
        raw(cell(r.entry, "l text entry-name"), r.entry),
        raw(cell(usd(r.equity)), r.equity),
        raw(cell(pct(r.return)), r.return),
        raw(cell(pct(r.mdd)), r.mdd),
        raw(cell(pct(r.score)), r.score),
        raw(cell(r.eligible ? "yes" : "no", r.eligible ? "yes" : "no"), r.eligible),
        raw(cell(r.fill_days), r.fill_days),
        raw(cell(pct(r.active_share)), r.active_share),
        raw(cell(clock(r.t)), r.t),
      );
      out.push(tr);
    }
    body.replaceChildren(...out);
  }

  // The latest day's rows, read one day at a time (a season's days all together are
  // hundreds of KB): the server's day, else the last day seen with rows, else (the first
  // read, or no row yet) every day, whose latest the table shows.
  async function latestScores(now) {
    const today = Math.floor(now / 86400000);
    let doc = await json("/v1/scores?day=" + today);
    if (!doc.rows.length && state.lastDay !== null && state.lastDay !== today) {
      doc = await json("/v1/scores?day=" + state.lastDay);
    }
    if (!doc.rows.length) doc = await json("/v1/scores");
    for (const r of doc.rows) if (state.lastDay === null || r.day > state.lastDay) state.lastDay = r.day;
    return doc;
  }

  function pick(name) {
    if (state.picked === name) return;
    state.picked = name;
    state.fills = []; state.lastFillT = 0; state.seen = new Set(); state.fillsOf = null;
    $("entry").value = name;
    $("fills-body").replaceChildren();
    for (const tr of $("entries-body").children) tr.classList.toggle("picked", tr.dataset.entry === name);
    fills().catch(shown);
  }

  function entries(doc) {
    const out = [];
    const names = [];
    for (const e of doc.entries) {
      names.push(e.entry);
      const m = e.mark;
      const tr = document.createElement("tr");
      tr.dataset.entry = e.entry;
      tr.className = "clickable" + (e.entry === state.picked ? " picked" : "");
      tr.append(
        cell(e.entry, "l text entry-name"),
        m ? raw(cell(usd(m.equity)), m.equity) : cell(""),
        m ? raw(cell(usd(m.peak)), m.peak) : cell(""),
        m ? raw(cell(pct(m.drawdown)), m.drawdown) : cell(""),
        m ? raw(cell(pct(m.mdd)), m.mdd) : cell(""),
        m ? cell(m.active ? "yes" : "no") : cell(""),
        raw(cell(e.fills), e.fills),
        m ? cell(clock(m.t)) : cell(""),
      );
      tr.addEventListener("click", () => pick(e.entry));
      out.push(tr);
    }
    $("entries-body").replaceChildren(...out);
    const select = $("entry");
    const have = Array.from(select.options).map((o) => o.value);
    if (have.join("\n") !== names.join("\n")) {
      select.replaceChildren(...names.map((n) => {
        const o = document.createElement("option");
        o.value = n; o.textContent = n;
        return o;
      }));
    }
    if (state.picked === null && names.length) {
      let wanted = "";
      try { wanted = decodeURIComponent(location.hash.replace(/^#entry=/, "")); } catch (e) {}
      pick(names.includes(wanted) ? wanted : names[0]);
    } else if (state.picked !== null) {
      select.value = state.picked;
      const listed = doc.entries.find((e) => e.entry === state.picked);
      if (listed && listed.fills !== state.fillsOf) return fills();
    }
    return null;
  }

  function quoteText(q) {
    if (!q) return "none recorded";
    if (q.source === "book") {
      return "book level " + q.level + ": " + px(q.px) + " × " + size(q.sz) + " (" + q.n +
        " orders) at " + clock(q.time);
    }
    return "print " + q.tid + ": " + px(q.px) + " × " + size(q.sz) + " at " + clock(q.time);
  }

  async function fills() {
    const name = state.picked;
    if (name === null) return;
    let more = true;
    while (more) {
      const path = "/v1/entries/" + encodeURIComponent(name) + "/fills?since=" + state.lastFillT;
      const doc = await json(path);
      if (state.picked !== name) return;
      let added = 0;
      for (const f of doc.fills) {
        if (state.seen.has(f.seq)) continue;
        state.seen.add(f.seq);
        state.fills.push(f);
        state.lastFillT = Math.max(state.lastFillT, f.t);
        added += 1;
      }
      more = doc.more && added > 0;  // (fills at the last t come again: none new, stop)
    }
    state.fillsOf = state.fills.length;
    const shownFills = state.fills.slice(-500).reverse();  // newest first
    $("fills-note").textContent = state.fills.length + " fills" +
      (state.fills.length > 500 ? " (the latest 500 shown)" : "") + ", newest first";
    $("fills-body").replaceChildren(...shownFills.map((f) => {
      const tr = document.createElement("tr");
      tr.append(
        raw(cell(f.seq), f.seq),
        raw(cell(clock(f.t)), f.t),
        cell(coins.get(f.asset) || String(f.asset)),
        cell(f.isBuy ? "buy" : "sell"),
        raw(cell(px(f.px)), f.px),
        raw(cell(size(f.sz)), f.sz),
        cell(f.liquidity),
        raw(cell(usd(f.venue_fee + f.exec_fee)), f.venue_fee + f.exec_fee),
        cell(quoteText(f.quote), "l text quote"),
        cell(f.note === null ? "" : f.note, "l text note"),
      );
      return tr;
    }));
  }

  async function feed(now) {
    const r = await get("/v1/log", { Range: "bytes=-" + C.log_tail_bytes });
    if (r.status === 416) return;  // an empty log
    if (!r.ok) throw new Error("/v1/log: HTTP " + r.status);
    const text = await r.text();
    const lines = text.split("\n");
    if (r.status === 206 && !/^bytes 0-/.test(r.headers.get("Content-Range") || "")) lines.shift();
    const books = new Map(), gaps = [];
    let first = null;
    for (const line of lines) {
      if (!line) continue;
      let doc;
      try { doc = JSON.parse(line); } catch (e) { continue; }
      if (typeof doc.t !== "number") continue;
      if (first === null) first = doc.t;
      const hl = doc.hl;
      if (hl && hl.channel === "l2Book" && hl.data) books.set(hl.data.coin, [doc.t, hl.data.time]);
      if (doc.arena && doc.arena.type === "gap") gaps.push(doc.arena);
    }
    $("feed-note").textContent = "From the log's last " + Math.round(C.log_tail_bytes / 1024) +
      " KB (GET /v1/log): each coin's latest book, its age at the server's time, and the " +
      "exchange's time to the server's; a book older than " + secs(C.stale_book_ms) +
      " is stale (no fills on it).";
    $("feed-body").replaceChildren(...C.markets.map((m) => {
      const tr = document.createElement("tr");
      tr.dataset.coin = m.coin;
      const seen = books.get(m.coin);
      if (!seen) {
        const since = first === null ? "" : "none since " + clock(first);
        tr.append(cell(m.coin, "l"), cell(since), cell(""), cell(""), cell("no", "no"));
        return tr;
      }
      const age = now - seen[0], lag = seen[0] - seen[1];
      const fresh = age <= C.stale_book_ms && lag <= C.stale_book_ms;
      tr.append(cell(m.coin, "l"), cell(clock(seen[0])), cell(secs(Math.max(0, age))),
        cell(secs(lag)), cell(fresh ? "yes" : "no", fresh ? "yes" : "no"));
      return tr;
    }));
    $("gaps").replaceChildren(...gaps.map((g) => {
      const li = document.createElement("li");
      li.textContent = "gap " + clock(g.from) + " to " + clock(g.to) + ": " + g.reason;
      return li;
    }));
  }

  function shown(err) {
    $("error").hidden = false;
    $("error").textContent = "last read failed: " + err.message + " (retrying)";
  }

  async function poll() {
    try {
      const [season, ents] = await Promise.all([json("/v1/season"), json("/v1/entries")]);
      header(season);
      scores(await latestScores(season.t));
      await entries(ents);
      await feed(season.t);
      $("error").hidden = true;
      $("updated").textContent = "read " + new Date().toISOString().slice(11, 19) + " UTC";
    } catch (err) {
      shown(err);
    } finally {
      setTimeout(poll, C.poll_ms);
    }
  }

  $("entry").addEventListener("change", (ev) => pick(ev.target.value));
  header(null);
  poll();
})();
