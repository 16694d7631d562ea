// Replay page: steps through the frames that fzmj-replay embedded (one per decision, one per hand end).
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("fzmj-data").textContent);
  FZ.meta = data.meta;
  const flat = []; // [hand, frame index] for every frame of the match, in order
  data.hands.forEach((h, hi) => h.frames.forEach((_, fi) => flat.push([hi, fi])));
  const root = document.querySelector("main");
  const pos = document.getElementById("pos");
  const state = { index: 0, lastRenderMs: 0, firstRenderAt: 0 };

  function goto(i) {
    const t0 = performance.now();
    state.index = Math.max(0, Math.min(flat.length - 1, i));
    const [hi, fi] = flat[state.index];
    const hand = data.hands[hi];
    const f = hand.frames[fi];
    renderTable(root, f, { view: data.view, result: hand.result, handInfo: { count: data.hands.length } });
    const d = f.step === null ? "end of hand" : `decision ${f.step + 1} / ${data.decisions}`;
    pos.textContent = `hand ${hi + 1} / ${data.hands.length} · ${d}`;
    document.body.dataset.hand = hi;
    document.body.dataset.frame = fi;
    document.body.dataset.step = f.step === null ? "end" : f.step;
    void root.offsetHeight; // force style and layout, so the figure includes them
    state.lastRenderMs = performance.now() - t0;
  }

  function handStart(hi) {
    return flat.findIndex(([h]) => h === hi);
  }
  function nextHand() {
    const hi = flat[state.index][0];
    goto(hi + 1 < data.hands.length ? handStart(hi + 1) : flat.length - 1);
  }
  function prevHand() {
    const [hi, fi] = flat[state.index];
    goto(fi > 0 || hi === 0 ? handStart(hi) : handStart(hi - 1));
  }
  const moves = {
    next: () => goto(state.index + 1),
    prev: () => goto(state.index - 1),
    nextHand,
    prevHand,
    end: () => goto(flat.length - 1),
    start: () => goto(0),
  };
  document.querySelectorAll("[data-move]").forEach((b) => b.addEventListener("click", () => moves[b.dataset.move]()));
  const keys = {
    ArrowRight: "next", ArrowLeft: "prev", ArrowDown: "nextHand", PageDown: "nextHand", ArrowUp: "prevHand", PageUp: "prevHand",
    End: "end", Home: "start", n: "next", p: "prev", N: "nextHand", P: "prevHand",
  };
  document.addEventListener("keydown", (e) => {
    const m = keys[e.key];
    if (m && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); moves[m](); }
  });
  window.fzmj = { goto, moves, state, total: flat.length, data };
  goto(0);
  state.firstRenderAt = performance.now();
})();
