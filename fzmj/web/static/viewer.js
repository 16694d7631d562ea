// fzmj table renderer: draws one frame (a state snapshot computed by the Python engine) as HTML.
// No rule lives here: every number, option and label comes from the frame or from `FZ.meta`
// (tile names, action names, preset), which Python writes. Used by the replay page and the play page.
"use strict";

const FZ = { meta: null, tileCache: new Map() };

// Pip positions (fractions of the tile face) for ranks 1..9 of dots and bamboo.
const PIPS = [
  [],
  [[0.5, 0.5]],
  [[0.5, 0.27], [0.5, 0.73]],
  [[0.26, 0.22], [0.5, 0.5], [0.74, 0.78]],
  [[0.3, 0.27], [0.7, 0.27], [0.3, 0.73], [0.7, 0.73]],
  [[0.28, 0.22], [0.72, 0.22], [0.5, 0.5], [0.28, 0.78], [0.72, 0.78]],
  [[0.3, 0.2], [0.7, 0.2], [0.3, 0.5], [0.7, 0.5], [0.3, 0.8], [0.7, 0.8]],
  [[0.22, 0.14], [0.5, 0.26], [0.78, 0.38], [0.3, 0.6], [0.7, 0.6], [0.3, 0.84], [0.7, 0.84]],
  [[0.3, 0.14], [0.7, 0.14], [0.3, 0.38], [0.7, 0.38], [0.3, 0.62], [0.7, 0.62], [0.3, 0.86], [0.7, 0.86]],
  [[0.22, 0.2], [0.5, 0.2], [0.78, 0.2], [0.22, 0.5], [0.5, 0.5], [0.78, 0.5], [0.22, 0.8], [0.5, 0.8], [0.78, 0.8]],
];
const DOT_COLORS = ["#1d4fa3", "#b3261e", "#1f7a3a"];
// Strokes drawn as paths (no font): the 万 of the characters suit, 中, 白's frame, the winds' letters.
const WAN = '<path d="M6 25.5H24M13.5 25.5C13 31 10.5 35 6.5 37.5M13 30H22C22 35 21 37.5 17 37" fill="none" stroke="#b3261e" stroke-width="2.2" stroke-linecap="round"/>';
const HONOR = {
  27: ["E", "#222"], 28: ["S", "#222"], 29: ["W", "#222"], 30: ["N", "#222"],
};
const FLOWER_COLORS = ["#2e7d32", "#c62828", "#ef6c00", "#1565c0", "#ad1457", "#6a1b9a", "#00838f", "#9e7700"];

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// A letter or digit drawn with strokes (7-segment-like paths): tiles never wait on a font.
const SEG = {
  0: "M8 4H22V36H8Z", 1: "M15 4V36", 2: "M8 4H22V20H8V36H22", 3: "M8 4H22V36H8M8 20H22", 4: "M8 4V20H22M22 4V36",
  5: "M22 4H8V20H22V36H8", 6: "M22 4H8V36H22V20H8", 7: "M8 4H22V36", 8: "M8 4H22V36H8ZM8 20H22", 9: "M22 20H8V4H22V36H8",
  E: "M22 4H8V36H22M8 20H19", S: "M22 4H8V20H22V36H8", W: "M6 4L10 36L15 18L20 36L24 4", N: "M8 36V4L22 36V4",
};
function glyph(ch, x, y, scale, color, width = 2.6) {
  return `<path transform="translate(${x} ${y}) scale(${scale})" d="${SEG[ch]}" fill="none" stroke="${color}" stroke-width="${width / scale}" stroke-linejoin="round" stroke-linecap="round"/>`;
}

// The face of one tile kind (0..41) as SVG paths, drawn by us: no font is needed for any tile.
function tileFace(kind) {
  const W = 30, H = 40;
  let body = "";
  if (kind < 27) {
    const suit = Math.floor(kind / 9), rank = (kind % 9) + 1;
    if (suit === 0) {
      body = glyph(rank, 7.5, 2, 0.5, "#222") + WAN;
    } else if (suit === 1) {
      const r = rank === 1 ? 9 : rank <= 4 ? 5.2 : 4;
      PIPS[rank].forEach(([x, y], i) => {
        const c = DOT_COLORS[(i + rank) % 3];
        body += `<circle cx="${x * W}" cy="${y * H}" r="${r}" fill="none" stroke="${c}" stroke-width="2"/><circle cx="${x * W}" cy="${y * H}" r="${r / 3}" fill="${c}"/>`;
      });
    } else {
      const h = rank === 1 ? 24 : rank <= 6 ? 10 : 8;
      PIPS[rank].forEach(([x, y], i) => {
        const c = rank === 1 || i % 3 !== 1 ? "#1f7a3a" : "#b3261e";
        body += `<rect x="${x * W - 2.2}" y="${y * H - h / 2}" width="4.4" height="${h}" rx="2" fill="${c}"/><line x1="${x * W - 2.2}" x2="${x * W + 2.2}" y1="${y * H}" y2="${y * H}" stroke="#fff" stroke-width="0.8"/>`;
      });
    }
  } else if (kind <= 30) {
    const [ch, color] = HONOR[kind];
    body = glyph(ch, 4, 3, 0.75, color, 3);
  } else if (kind === 31) {  // 白 white dragon: the blue frame
    body = '<rect x="5" y="5" width="20" height="30" rx="2" fill="none" stroke="#1d4fa3" stroke-width="2.5"/><rect x="9" y="9" width="12" height="22" fill="none" stroke="#1d4fa3" stroke-width="1"/>';
  } else if (kind === 32) {  // 发 green dragon: a green diamond with a leaf stroke
    body = '<path d="M15 4L27 20L15 36L3 20Z" fill="none" stroke="#1f7a3a" stroke-width="2.5"/><path d="M9 20H21M15 10V30" stroke="#1f7a3a" stroke-width="2"/>';
  } else if (kind === 33) {  // 中 red dragon: the box and the stroke through it
    body = '<path d="M6 12H24V26H6ZM15 4V36" fill="none" stroke="#b3261e" stroke-width="3" stroke-linejoin="round"/>';
  } else {  // flowers 1f..8f: five petals and the number
    const c = FLOWER_COLORS[kind - 34];
    for (let i = 0; i < 5; i++) {
      const a = (i * 2 * Math.PI) / 5 - Math.PI / 2;
      body += `<circle cx="${(15 + 6 * Math.cos(a)).toFixed(1)}" cy="${(15 + 6 * Math.sin(a)).toFixed(1)}" r="4" fill="${c}" opacity="0.8"/>`;
    }
    body += `<circle cx="15" cy="15" r="2.5" fill="#ffd34d"/>` + glyph(kind - 33, 11, 25, 0.3, c, 2);
  }
  return `<svg viewBox="0 0 ${W} ${H}" aria-hidden="true">${body}</svg>`;
}

// One tile. `extra`: more CSS classes; golds get the gold look (R5: every tile of the gold kind).
function tile(kind, extra = "", attrs = "") {
  const gold = FZ.gold === kind && kind < 27;
  const key = `${kind}|${extra}|${gold}|${attrs}`;
  let html = FZ.tileCache.get(key);
  if (html === undefined) {
    const name = FZ.meta.names[kind];
    const title = `${name} ${FZ.meta.glyphs[kind]}${gold ? " — gold 金" : ""}`;
    html = `<span class="tile${gold ? " gold" : ""}${extra ? " " + extra : ""}" data-kind="${kind}" title="${esc(title)}"${attrs}>${tileFace(kind)}<i>${name}</i>${gold ? "<b>金</b>" : ""}</span>`;
    FZ.tileCache.set(key, html);
  }
  return html;
}

// The belief model's deal-in probability of each legal discard, most dangerous first: one
// tile per kind with its percentage, coloured by level (safe < 2% <= watch < 8% <= danger).
function dangerLevel(p) { return p >= 0.08 ? "hi" : p >= 0.02 ? "mid" : "lo"; }
function dangerStrip(rows, label = "deal-in risk") {
  if (!rows || !rows.length) return "";
  const cells = rows.map(([k, p]) => `<span class="dz ${dangerLevel(p)}" data-kind="${k}" data-p="${p}">${tile(k)}<em>${(100 * p).toFixed(p < 0.1 ? 1 : 0)}%</em></span>`).join("");
  return `<div class="danger" title="P(discarding the tile completes another seat's hand), from the belief model (the seat's own view only)"><span class="dl">${esc(label)}</span>${cells}</div>`;
}

function backTile() {
  return '<span class="tile back" data-kind="-1"></span>';
}

const MELD_LABEL = {
  chi: "chi 吃", peng: "peng 碰", exposed_kong: "kong 明杠", added_kong: "added kong 加杠", concealed_kong: "concealed kong 暗杠",
};

function meldTiles(m) {
  const [type, kind, taken] = m;
  if (kind < 0) return backTile() + backTile() + backTile() + backTile();
  let kinds;
  if (type === "chi") kinds = [kind, kind + 1, kind + 2];
  else if (type === "peng") kinds = [kind, kind, kind];
  else kinds = [kind, kind, kind, kind];
  let marked = false;
  return kinds.map((k) => {
    if (!marked && taken === k) { marked = true; return tile(k, "taken"); }
    return tile(k);
  }).join("");
}

function seatName(s) {
  const names = (FZ.meta.seat_names || [])[s];
  return names ? `seat ${s} · ${esc(names)}` : `seat ${s}`;
}

const WINDS = [["E", "东"], ["S", "南"], ["W", "西"], ["N", "北"]];

// The HTML of one seat's panel. opts.clickable: kinds the person may discard now (play page).
function seatPanel(f, s, opts) {
  const st = f.seats[s];
  const badges = [];
  if (f.dealer === s) badges.push(`<span class="badge dealer" title="dealer 庄家">dealer 庄${f.streak ? " · streak 连庄 " + f.streak : ""}</span>`);
  if (f.actor === s) badges.push('<span class="badge turn">to act</span>');
  if (st.passed && st.passed.length) badges.push(`<span class="badge passed" title="过水 (R9.4): may not win on a discard of these kinds until it discards">过水 passed: ${st.passed.map((k) => FZ.meta.names[k]).join(" ")}</span>`);
  if (st.idle_gold) badges.push('<span class="badge idle" title="闲金 (R9.5): wins on every kind; a discard win only as 金雀">闲金 idle gold</span>');
  if (st.gold_thrown) badges.push('<span class="badge thrown" title="discarded a gold (R7, R9.3): self-draw wins only">discarded a gold 打金</span>');
  if (opts.view === s) badges.push('<span class="badge you">you</span>');
  let hand;
  if (st.hand) {
    // the tile just drawn (or the winning tile) goes last, set apart, as at the table
    const kinds = st.hand.slice();
    const won = f.phase === "end" && opts.result && opts.result.winner === s && f.win_tile !== undefined;
    const apart = won ? f.win_tile : st.last_draw;
    const at = apart === null || apart === undefined ? -1 : kinds.lastIndexOf(apart);
    if (at >= 0) { kinds.splice(at, 1); kinds.push(apart); }
    hand = kinds.map((k, i) => {
      let cls = at >= 0 && i === kinds.length - 1 ? (won ? "drawn win" : "drawn") : "";
      let attrs = "";
      if (opts.clickable && opts.clickable.has(k)) { cls += (cls ? " " : "") + "click"; attrs = ` data-action="${k}" role="button" tabindex="0"`; }
      return tile(k, cls, attrs);
    }).join("");
  } else {
    hand = backTile().repeat(st.n_hand);
  }
  const melds = st.melds.map((m) => {
    const from = m[3] >= 0 ? ` from seat ${m[3]}` : "";
    return `<span class="meld" title="${esc(MELD_LABEL[m[0]] + from)}" data-type="${m[0]}">${meldTiles(m)}<small>${MELD_LABEL[m[0]]}${from}</small></span>`;
  }).join("");
  const flowers = st.flowers.map((k) => tile(k, "small")).join("");
  const latest = f.last_discard === s ? st.disc.length - 1 : -1;
  const disc = st.disc.map(([k, claimed], i) => {
    const cls = (claimed ? "small claimed" : "small") + (i === latest ? " latest" : "");
    return tile(k, cls, claimed ? ' data-claimed="1"' : "");
  }).join("");
  const score = f.scores[s];
  const [wl, wc] = WINDS[(s - f.dealer + 4) % 4];
  const me = opts.bottom === s ? " me" : "";
  return `<div class="seat${f.actor === s ? " acting" : ""}${me}" data-seat="${s}">
    <div class="seat-head"><span class="wind" title="seat wind">${wl} ${wc}</span><b>${seatName(s)}</b> <span class="score" data-score="${score}">${score > 0 ? "+" : ""}${score}</span> ${badges.join(" ")}</div>
    <div class="row"><div class="hand" data-n="${st.n_hand}">${hand}</div><div class="melds">${melds}</div></div>
    ${st.flowers.length ? `<div class="row small-row"><span class="lbl">花 ${st.flowers.length}</span><div class="flowers">${flowers}</div></div>` : ""}
    <div class="discards" title="discards, in order">${disc}</div>
  </div>`;
}

function infoBar(f, handInfo) {
  const w = f.wall;
  const final = w.final >= 0 ? `<span class="pill final">final round 最后一组: ${w.final} draws</span>` : (w.drawable <= 4 && f.phase !== "end" ? '<span class="pill final">final round next 最后一组</span>' : "");
  return `<div class="info">
    <span class="pill">hand ${f.hand + 1}${handInfo ? " / " + handInfo.count : ""}</span>
    <span class="pill goldpill">gold 金 ${tile(f.gold, "small indicator")}</span>
    <span class="pill" id="wall">left <b data-left>${w.left}</b> · reserve 留 <b>${w.reserve}</b> · drawable <b>${w.drawable}</b></span>
    ${final}
  </div>`;
}

function actionLabel(a) {
  return a === null || a === undefined ? "?" : FZ.meta.actions[a];
}

// The tiles an action makes, for drawing it on a button: chi as its run, peng/kong as the set.
function actionTiles(a, f) {
  const t = f.claim ? f.claim.tile : null;
  if (a === 27 && t !== null) return [t, t + 1, t + 2];
  if (a === 28 && t !== null) return [t - 1, t, t + 1];
  if (a === 29 && t !== null) return [t - 2, t - 1, t];
  if (a === 30 && t !== null) return [t, t, t];
  if (a === 31 && t !== null) return [t, t, t, t];
  if (a >= 32 && a <= 58) return [a - 32, a - 32, a - 32, a - 32];
  return [];
}

function claimBox(f) {
  const c = f.claim;
  if (!c) return "";
  const rows = c.asked.map((a) => {
    const offered = a.offered ? a.offered.map(actionLabel).join(", ") : "(hidden)";
    const ans = a.answered ? (a.answer === null ? "answered (hidden)" : actionLabel(a.answer)) : f.actor === a.seat ? "deciding…" : "waiting";
    return `<tr data-seat="${a.seat}"><td>seat ${a.seat}</td><td>${esc(offered)}</td><td class="ans">${esc(ans)}</td></tr>`;
  }).join("");
  return `<div class="box claim"><h3>claim window 吃碰胡</h3>
    <p>seat ${c.from} discarded ${tile(c.tile, "small")}${c.rob ? " — the dealer's first discard: 抢金 (rob the gold) is offered too" : ""}</p>
    <p class="note">asked nearest first, decided blind; resolved by priority once all have answered</p>
    <table><tr><th>seat</th><th>offered</th><th>answer</th></tr>${rows}</table></div>`;
}

const SPECIAL_LABEL = {
  heavenly: "天胡 heavenly win", rob_gold: "抢金 rob the gold", no_flower_no_kong: "平胡 no flower no kong", one_flower: "平胡 one flower",
  three_golds: "三金倒 three golds", golden_pair: "金雀 golden pair", golden_dragon: "金龙 golden dragon",
};
const WIN_TYPE_LABEL = { discard: "a discard win 放胡", self_draw: "self-draw 自摸", heavenly: "heavenly win 天胡", rob_gold: "robbing the gold 抢金", three_golds: "three golds 三金倒" };

const SET_LABEL = { run: "run 顺", triplet: "triplet 刻", pair: "pair 将" };
const SHAPE_LABEL = {
  golden_pair: "the two golds are the pair 金雀", golden_dragon: "three golds are their own triplet 金龙",
  three_golds: "三金倒: three golds win whatever the shape, so no split", gold_kan: "金坎: the wrap-around gold kan shape",
  unsplit: "no split into sets",
};

// One set of the winning split: a gold is drawn as itself with the tile it stands for under it.
function splitSet(x) {
  const tiles = x.tiles.map((k, i) => {
    if (!x.golds.includes(i)) return tile(k, "small");
    const name = FZ.meta.names[k];
    return `<span class="stand" title="gold 金 standing for ${esc(name)}" data-as="${k}">${tile(FZ.gold, "small")}<small>=${esc(name)}</small></span>`;
  }).join("");
  return `<span class="meld" data-type="${x.type}">${tiles}<small>${SET_LABEL[x.type]}</small></span>`;
}

// The winner's hand as the engine splits it (frames.winning_split), then the exposed melds as they are.
function winSplit(r, f) {
  const sp = f && f.win_split;
  if (!sp || r.winner === null || r.winner === undefined) return "";
  const seat = f.seats[r.winner];
  const sets = sp.sets
    ? [...sp.sets, sp.pair].map(splitSet).join("")
    : `<span class="meld" data-type="${esc(sp.shape)}">${(seat.hand || []).map((k) => tile(k, "small")).join("")}</span>`;
  const melds = seat.melds.map((m) => `<span class="meld" data-type="${m[0]}">${meldTiles(m)}<small>${MELD_LABEL[m[0]]}</small></span>`).join("");
  const note = SHAPE_LABEL[sp.shape] ? `<p class="note">${esc(SHAPE_LABEL[sp.shape])}</p>` : "";
  return `<div class="winsplit" data-shape="${esc(sp.shape)}"><p>winning hand 胡牌</p><div class="melds">${sets}${melds}</div>${note}</div>`;
}

function resultBox(r, f) {
  if (!r) return "";
  let head;
  if (r.winner === null || r.winner === undefined) head = "drawn hand 和局 — nobody pays";
  else head = `seat ${r.winner} wins: ${WIN_TYPE_LABEL[r.win_type] || r.win_type}${r.discarder !== null && r.discarder !== undefined ? `, on seat ${r.discarder}'s discard` : ""}`;
  const winTile = f && f.win_tile !== undefined && r.winner !== null ? `<p>winning tile ${tile(f.win_tile, "small win")}</p>` : "";
  const rows = (r.rows || []).map(([label, value, note]) => `<tr><td>${esc(label)}</td><td class="num">${value === null || value === undefined ? "" : esc(value)}</td><td class="note">${esc(note)}</td></tr>`).join("");
  const specials = (r.specials || []).map((s) => `<span class="badge special">${esc(SPECIAL_LABEL[s] || s)}</span>`).join(" ");
  const pay = r.points.map((p) => `<td data-points="${p}">${p > 0 ? "+" : ""}${p}</td>`).join("");
  const after = r.scores_after ? r.scores_after.map((p) => `<td>${p > 0 ? "+" : ""}${p}</td>`).join("") : "";
  return `<div class="box result" data-winner="${r.winner === null ? "" : r.winner}" data-value="${r.value}"><h3>result</h3><p class="head">${esc(head)}</p>
    ${winTile}${winSplit(r, f)}${specials ? `<p>${specials}</p>` : ""}
    ${rows ? `<table class="breakdown">${rows}</table>` : ""}
    <table class="pay"><tr><th></th><th>seat 0</th><th>seat 1</th><th>seat 2</th><th>seat 3</th></tr><tr><th>payments</th>${pay}</tr>${after ? `<tr><th>scores</th>${after}</tr>` : ""}</table></div>`;
}

// Draw frame `f` into `root`. opts: {view, clickable:Set, result (shown on the end frame), handInfo,
// popup (a call to announce), noSide}. The viewing seat (seat 0 when every seat is shown) sits at the bottom.
function renderTable(root, f, opts = {}) {
  FZ.gold = f.gold;
  const bottom = opts.bottomSeat !== undefined ? opts.bottomSeat : opts.view === null || opts.view === undefined ? 0 : opts.view;
  const o = Object.assign({}, opts, { bottom });
  const place = ["bottom", "right", "top", "left"];
  const seats = [0, 1, 2, 3].map((s) => `<div class="pos-${place[(s - bottom + 4) % 4]}">${seatPanel(f, s, o)}</div>`).join("");
  const popup = opts.popup ? `<div class="popup">${esc(opts.popup)}</div>` : "";
  root.querySelector(".table").innerHTML = `<div class="felt">${seats}<div class="center">${infoBar(f, opts.handInfo)}${popup}</div></div>`;
  if (opts.noSide) return;
  const side = [];
  if (f.action) {
    side.push(`<div class="box decision"><h3>decision ${f.step === null ? "" : f.step + 1}</h3><p>seat ${f.action.seat} (${esc(f.phase.replace(/_/g, " "))}): <b class="chosen">${esc(f.action.name)}</b></p>${f.legal ? `<p class="note">legal: ${f.legal.map(actionLabel).map(esc).join(", ")}</p>` : ""}</div>`);
  }
  side.push(claimBox(f));
  if (f.events && f.events.length) side.push(`<div class="box events"><h3>then</h3>${f.events.map((e) => `<p>${esc(e)}</p>`).join("")}</div>`);
  if (f.phase === "end") side.push(resultBox(opts.result, f));
  if (opts.extraSide) side.push(opts.extraSide);
  root.querySelector(".side").innerHTML = side.join("");
}
