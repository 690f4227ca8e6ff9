// arena report.html: draws the run's data D (the page's JSON, unpacked by loader.js) with
// Plotly (run by loader.js before it calls this). Every chart div gets data-drawn="1" once
// drawn, so a test (and a person) can tell a chart that failed from one that is empty.
window.arenaReport = function (D) {
  "use strict";
  var T0 = D.t0;
  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                 "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  var CONFIG = {displaylogo: false, responsive: true,
                modeBarButtonsToRemove: ["select2d", "lasso2d"]};

  // Plotly reads <b>, <a href>... and &lt; in titles, names and hover text: what a run
  // says goes in with its markup characters escaped, so it is shown, never read as markup
  function plain(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function dollars(v) {
    return "$" + v.toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});
  }
  function clock(s) { return new Date(T0 + s * 1000).toISOString().slice(11, 19); }
  function ms(ts) { return ts.map(function (s) { return T0 + s * 1000; }); }
  function colour(i) { return PALETTE[i % PALETTE.length]; }
  function entryColour(name) { return colour(D.entries.indexOf(name)); }

  function layout(title, yTitle, extra) {
    var l = {
      title: {text: title, font: {size: 14}, x: 0, xanchor: "left"},
      margin: {l: 60, r: 20, t: 40, b: 50},
      height: 320,
      hovermode: "x unified",
      xaxis: {type: "date"},
      yaxis: {title: {text: yTitle}, zeroline: false},
      legend: {orientation: "h", y: -0.2},
      shapes: []
    };
    for (var k in extra || {}) { l[k] = extra[k]; }
    return l;
  }

  function limitLine(value, label) {
    return {type: "line", xref: "paper", x0: 0, x1: 1, y0: value, y1: value,
            line: {color: "#d62728", width: 1.5, dash: "dash"},
            label: {text: label, textposition: "end", yanchor: "top",
                    font: {size: 11, color: "#d62728"}}};
  }

  function draw(id, traces, lay) {
    var el = document.getElementById(id);
    if (!el) { return; }
    return Plotly.newPlot(el, traces, lay, CONFIG).then(function () {
      el.setAttribute("data-drawn", "1");
    });
  }

  // ---- several entries on one chart ------------------------------------------------
  function markSeries(key, dash, suffix, opts) {
    var out = [];
    D.entries.forEach(function (name) {
      var m = D.marks[name];
      if (!m || !m[key]) { return; }
      var s = m[key];
      var tr = {x: ms(s.t), y: s.v, name: plain(name + (suffix || "")), type: "scatter",
                mode: "lines", line: {color: entryColour(name), width: 1.5, dash: dash || "solid"},
                legendgroup: name};
      for (var k in opts || {}) { tr[k] = opts[k]; }
      out.push(tr);
    });
    return out;
  }

  // equity as small multiples: a strip per entry on its own dollar scale (D.equity_scale,
  // chosen as the terminal's and chart.svg's are), one time axis; on one shared scale an
  // entry that lost 1% would flatten every other line
  var STRIP = 110;
  function drawEquity() {
    var names = D.entries.filter(function (name) { return D.marks[name]; });
    var n = Math.max(names.length, 1);
    var lay = layout("Equity and exit-value equity (dotted), each entry on its own scale", "",
                     {height: 90 + STRIP * n, grid: {rows: n, columns: 1, pattern: "independent",
                      roworder: "top to bottom", ygap: 0.3}, annotations: [], showlegend: false,
                      margin: {l: 70, r: 20, t: 60, b: 40}});
    var traces = [];
    names.forEach(function (name, i) {
      var ax = i === 0 ? "" : String(i + 1);
      var m = D.marks[name];
      var scale = D.equity_scale[name], pad = (scale[1] - scale[0]) * 0.08;
      var range = [scale[0] - pad, scale[1] + pad];
      var base = {type: "scatter", mode: "lines", xaxis: "x" + ax, yaxis: "y" + ax,
                  legendgroup: name};
      traces.push(Object.assign({x: ms(m.equity.t), y: m.equity.v, name: plain(name),
                                 line: {color: entryColour(name), width: 1.5}}, base));
      if (m.exit) {
        traces.push(Object.assign({x: ms(m.exit.t), y: m.exit.v, name: plain(name + " exit value"),
                                   line: {color: entryColour(name), width: 1.5, dash: "dot"}}, base));
      }
      lay["xaxis" + ax] = {type: "date", matches: i === 0 ? undefined : "x",
                           showticklabels: i === names.length - 1};
      lay["yaxis" + ax] = {range: range, tickprefix: "$", tickformat: ",.0f", nticks: 3,
                           zeroline: false};
      var v = m.equity.v;
      lay.annotations.push({text: "<b>" + plain(name) + "</b>: " + dollars(v[v.length - 1]),
                            xref: "x" + ax + " domain", yref: "y" + ax + " domain", x: 0, y: 1,
                            xanchor: "left", yanchor: "bottom", showarrow: false,
                            font: {color: entryColour(name), size: 12}});
      if (range[0] <= D.starting_equity && D.starting_equity <= range[1]) {
        lay.shapes.push({type: "line", xref: "x" + ax + " domain", yref: "y" + ax, x0: 0, x1: 1,
                         y0: D.starting_equity, y1: D.starting_equity,
                         line: {color: "#999", width: 1, dash: "dot"}});
      }
    });
    var el = document.getElementById("chart-equity");
    if (el) {  // the whole row: a strip per entry needs the width and the height
      el.style.gridColumn = "1 / -1";
      el.style.minHeight = lay.height + "px";
    }
    draw("chart-equity", traces, lay);
  }

  function drawEntries() {
    drawEquity();

    // the drawdown to the worst of any entry (at least 1%), as the terminal's: the limit's
    // line only when the scale reaches it; the title says the worst in words
    var s = D.drawdown_scale;
    var dd = markSeries("drawdown", "solid", "", {fill: "tozeroy"});
    var lay2 = layout(s.title.map(plain).join("<br>"), "%");
    lay2.margin.t = 60;
    if (s.limit_in_view) {
      lay2.shapes.push(limitLine(D.limits.drawdown_pct, D.limits.drawdown_pct + "% pauses the entry"));
    }
    lay2.yaxis.range = [0, s.top];
    draw("chart-drawdown", dd, lay2);

    var cap = markSeries("cap", "solid", "");
    var lay3 = layout("Cap used (positions and reserves, % of equity) against " + D.limits.cap_pct + "%", "%");
    lay3.shapes.push(limitLine(D.limits.cap_pct, D.limits.cap_pct + "% cap"));
    lay3.yaxis.rangemode = "tozero";
    draw("chart-cap", cap, lay3);

    var oo = markSeries("orders", "solid", "", {line: undefined});
    oo.forEach(function (tr) { tr.line = {shape: "hv", color: entryColour(tr.legendgroup), width: 1.5}; });
    var lay4 = layout("Open orders against " + D.limits.max_orders, "orders");
    lay4.shapes.push(limitLine(D.limits.max_orders, D.limits.max_orders + " slots"));
    lay4.yaxis.rangemode = "tozero";
    draw("chart-open-orders", oo, lay4);
  }

  // ---- costs, per-coin PnL, verdict -------------------------------------------------
  function drawCosts() {
    var kinds = [["venue", "venue fees"], ["exec", "execution fees"],
                 ["perf", "performance fees"], ["funding", "funding paid"]];
    var traces = kinds.map(function (k, i) {
      return {type: "bar", name: k[1], x: D.entries.map(plain),
              y: D.entries.map(function (n) { return D.costs[n][k[0]]; }),
              marker: {color: ["#636efa", "#00cc96", "#ab63fa", "#ffa15a"][i]}};
    });
    var lay = layout("Fees and funding (USDC; negative funding: received)", "USDC",
                     {barmode: "relative", hovermode: "closest"});
    lay.xaxis = {type: "category"};
    draw("chart-costs", traces, lay);

    var coins = D.coins;
    var pnl = D.entries.map(function (n) {
      return {type: "bar", name: plain(n), x: coins.map(plain), marker: {color: entryColour(n)},
              y: coins.map(function (c) { var r = D.coin_pnl[n][c]; return r ? r.pnl : 0; })};
    });
    var lay2 = layout("PnL per coin, net of fees and funding (USDC)", "USDC",
                      {barmode: "group", hovermode: "closest"});
    lay2.xaxis = {type: "category"};
    draw("chart-coin-pnl", pnl, lay2);
  }

  // ---- the verdict's evidence: one chart per answer that has something to draw ------
  function band(lay, b, colour) {
    if (b.mean !== null) {
      lay.shapes.push({type: "line", xref: "paper", x0: 0, x1: 1, y0: b.mean, y1: b.mean,
                       line: {color: colour || "#333", width: 1.5},
                       label: {text: "mean " + b.mean.toFixed(4) + "%", textposition: "end"}});
    }
    if (b.low !== null && b.high !== null) {
      lay.shapes.push({type: "rect", xref: "paper", x0: 0, x1: 1, y0: b.low, y1: b.high,
                       fillcolor: "rgba(0,0,0,0.08)", line: {width: 0}, layer: "below"});
    }
  }

  function blockBars(id, b, name, title, yTitle) {
    var v = D.verdict;
    var half = v.block_s * 500;
    var tr = {type: "bar", width: v.block_s * 1000 * 0.9, name: plain(name),
              x: b.blocks.map(function (r) { return T0 + r.start_s * 1000 + half; }),
              y: b.blocks.map(function (r) { return r.v; }),
              marker: {color: b.blocks.map(function (r) { return r.v >= 0 ? "#2ca02c" : "#d62728"; })}};
    var lay = layout(title, yTitle, {hovermode: "closest"});
    if (b.blocks.length) {
      lay.xaxis.range = [T0 + b.blocks[0].start_s * 1000,
                         T0 + (b.blocks[b.blocks.length - 1].start_s + v.block_s) * 1000];
    }
    band(lay, b);
    draw(id, [tr], lay);
  }

  function drawVerdict() {
    var v = D.verdict;
    var interval = function (b) {
      return b.low !== null ? ", the mean and its 95% interval" : " (too few blocks for an interval)";
    };
    if (v.money) {
      blockBars("chart-money", v.money, v.strategy + "'s S",
                "Does it make money? " + plain(v.strategy) + "'s S in each block of " +
                plain(v.epoch) + interval(v.money), "S (%)");
    }
    if (v.skill) {
      var s = v.skill;
      var tr = {type: "histogram", x: s.twins, name: "random twins", nbinsx: 30,
                marker: {color: "rgba(99,110,250,0.7)"},
                hovertemplate: "S %{x}%<br>%{y} twins<extra></extra>"};
      var lay = layout("Is it skill? " + plain(v.strategy) + "'s S among its " + s.n +
                       " random twins' (its trips at random times): p " + s.p_value.toFixed(3),
                       "twins", {hovermode: "closest", bargap: 0.05});
      lay.xaxis = {type: "linear", title: {text: "S over the run (%)"}};
      lay.shapes.push({type: "line", xref: "x", yref: "paper", x0: s.score, x1: s.score,
                       y0: 0, y1: 1, line: {color: "#d62728", width: 2},
                       label: {text: plain(v.strategy) + ": S " + plain(s.score_text),
                               textangle: 0, textposition: "end", xanchor: "left",
                               yanchor: "top", font: {size: 11, color: "#d62728"}}});
      draw("chart-skill", [tr], lay);
    }
    if (v.floor) {
      blockBars("chart-floor", v.floor, v.strategy + " − " + v.control,
                "The floor: " + plain(v.strategy) + "'s S minus " + plain(v.control) +
                "'s, block by block" + interval(v.floor), "lead (percentage points)");
    }
  }

  // ---- per coin: price, fills, orders' lives, rejections ----------------------------
  function priceTraces(coin, entry) {
    var p = D.prices[coin];
    var traces = [];
    if (p) {
      traces.push({x: ms(p.t), y: p.high, type: "scatter", mode: "lines", name: "prints high",
                   line: {width: 0, color: "rgba(120,120,120,0.3)"}, hoverinfo: "skip",
                   showlegend: false, connectgaps: false});
      traces.push({x: ms(p.t), y: p.low, type: "scatter", mode: "lines", name: "prints low–high",
                   fill: "tonexty", fillcolor: "rgba(120,120,120,0.25)",
                   line: {width: 0, color: "rgba(120,120,120,0.3)"}, connectgaps: false});
      traces.push({x: ms(p.t), y: p.mid, type: "scatter", mode: "lines", name: "book mid",
                   line: {color: "#333", width: 1.2}});
      traces.push({x: ms(p.t), y: p.last, type: "scatter", mode: "markers", name: "last print",
                   marker: {size: 3, color: "#777"}, visible: "legendonly"});
    }
    var o = ((D.orders[entry] || {})[coin]) || null;
    if (o) {
      [[1, "buy orders' lives", "rgba(44,160,44,0.45)"], [0, "sell orders' lives", "rgba(214,39,40,0.45)"]]
        .forEach(function (side) {
          var x = [], y = [], txt = [];
          for (var i = 0; i < o.px.length; i++) {
            if (o.buy[i] !== side[0]) { continue; }
            var why = (side[0] ? "buy " : "sell ") + o.sz[i] + " @ " + o.px[i] + ", filled " +
                      o.filled[i] + ": " + (o.end[i] ? o.end[i] + " at " + clock(o.t1[i]) : "open at the end");
            x.push(T0 + o.t0[i] * 1000, T0 + o.t1[i] * 1000, null);
            y.push(o.px[i], o.px[i], null);
            txt.push(plain(why), plain(why), "");
          }
          if (x.length) {
            traces.push({x: x, y: y, text: txt, type: "scatter", mode: "lines", name: side[1],
                         line: {color: side[2], width: 3}, hovertemplate: "%{y}<br>%{text}<extra></extra>"});
          }
        });
    }
    var f = ((D.fills[entry] || {})[coin]) || null;
    if (f) {
      var groups = [[1, 1, "buy taker", "triangle-up", "#2ca02c"],
                    [1, 0, "buy maker", "triangle-up-open", "#2ca02c"],
                    [0, 1, "sell taker", "triangle-down", "#d62728"],
                    [0, 0, "sell maker", "triangle-down-open", "#d62728"]];
      groups.forEach(function (g) {
        var x = [], y = [], txt = [];
        for (var i = 0; i < f.px.length; i++) {
          if (f.buy[i] !== g[0] || f.taker[i] !== g[1]) { continue; }
          x.push(T0 + f.t[i] * 1000); y.push(f.px[i]); txt.push("size " + f.sz[i]);
        }
        if (x.length) {
          traces.push({x: x, y: y, text: txt, type: "scatter", mode: "markers",
                       name: "fill: " + g[2], marker: {symbol: g[3], size: 9, color: g[4],
                       line: {width: 1.5, color: g[4]}},
                       hovertemplate: g[2] + " %{y}<br>%{text}<extra></extra>"});
        }
      });
    }
    var r = ((D.rejections[entry] || {})[coin]) || null;
    if (r && r.t.length) {
      traces.push({x: ms(r.t), y: r.px, text: r.why.map(plain), type: "scatter", mode: "markers",
                   name: "rejected", marker: {symbol: "x", size: 9, color: "#000"},
                   hovertemplate: "rejected at %{y}<br>%{text}<extra></extra>"});
    }
    return traces;
  }

  function coinTitle(coin, entry) {
    var n = (D.counts[entry] || {})[coin] || {fills: 0, fills_drawn: 0, orders: 0, orders_drawn: 0, rejected: 0};
    var s = plain(coin) + ": book mid and prints, " + plain(entry) + "'s " + n.fills + " fills, " +
            n.orders + " orders' lives and " + n.rejected + " rejections";
    if (n.fills_drawn < n.fills || n.orders_drawn < n.orders) {
      s += " (drawn: " + n.fills_drawn + " fills, " + n.orders_drawn + " orders, evenly spread)";
    }
    return s;
  }

  function drawCoins(entry) {
    D.coins.forEach(function (coin) {
      var id = "chart-price-" + coin;
      var lay = layout(coinTitle(coin, entry), "price", {height: 420, hovermode: "closest"});
      var el = document.getElementById(id);
      if (el && el.getAttribute("data-drawn")) {
        Plotly.react(el, priceTraces(coin, entry), lay, CONFIG);
      } else {
        draw(id, priceTraces(coin, entry), lay);
      }
    });
  }

  // ---- round trips: a table built from the data, one entry at a time ----------------
  function tripsTable(entry) {
    var rt = D.round_trips[entry] || {rows: [], total: 0};
    var body = document.getElementById("trips-body");
    body.textContent = "";
    // cells as text nodes: a coin's name is the season file's, never the page's markup
    rt.rows.forEach(function (r) {
      var tr = document.createElement("tr");
      r.forEach(function (cell) {
        var td = document.createElement("td");
        td.textContent = cell;
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    if (!rt.rows.length) {
      var tr = document.createElement("tr"), td = document.createElement("td");
      td.colSpan = 10;
      td.textContent = "no round trip";
      tr.appendChild(td);
      body.appendChild(tr);
    }
    document.getElementById("trips-note").textContent = rt.total > rt.rows.length
      ? "the first " + rt.rows.length + " of " + rt.total + " round trips (all of them: arena export)"
      : rt.total + " round trips";
  }

  function choose(entry) {
    drawCoins(entry);
    tripsTable(entry);
    document.querySelectorAll(".entry-name").forEach(function (el) { el.textContent = entry; });
  }

  var sel = document.getElementById("entry");
  D.entries.forEach(function (name) {
    var o = document.createElement("option");
    o.value = name; o.textContent = name;
    sel.appendChild(o);
  });
  sel.value = D.entries[0];
  sel.addEventListener("change", function () { choose(sel.value); });

  drawEntries();
  drawCosts();
  drawVerdict();
  choose(D.entries[0]);
};
