// The tacos viewer (embedded into the page by cmake/embed_viewer.cmake; the data object is
// described at the top of src/io/viewer.cpp). One or two schedules, each in a panel: the
// topology with the messages in flight at the slider's time, per-link Gantt lanes (or, for
// schedules shown aggregated, a heat map of each link's utilization over time) and each NPU's
// completed share. window.tacosView exposes the state the browser tests read.
(function () {
  'use strict';
  const SVG = 'http://www.w3.org/2000/svg';
  const data = JSON.parse(document.getElementById('tacos-data').textContent);
  const topo = data.topology;
  const schedules = data.schedules;
  // One time axis for every panel: the longer schedule's collective time.
  const tMax = Math.max(1, ...schedules.map((s) => s.time_ps));
  const PLAY_SECONDS = 8;

  const view = {
    ready: false,
    frames: 0,      // renders so far (the animation test counts them)
    now: 0,         // the slider's time, ps
    panels: [],
    setTime: setTime,
    time: () => view.now,
    selectChunk: (panel, chunk) => selectChunk(view.panels[panel], chunk),
  };
  window.tacosView = view;

  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(tag, attrs, parent, text) {
    const e = document.createElement(tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  // As tacos prints times: microseconds with up to 6 decimals (exact picoseconds).
  function micros(ps) {
    return (ps / 1e6).toFixed(6).replace(/\.?0+$/, '') + ' us';
  }
  function bytesText(b) {
    const units = ['B', 'KiB', 'MiB', 'GiB'];
    let k = 0;
    while (b >= 1024 && k < units.length - 1 && b % 1024 === 0) { b /= 1024; ++k; }
    return b + ' ' + units[k];
  }
  function decode(text) {
    const raw = atob(text);
    const out = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; ++i) out[i] = raw.charCodeAt(i);
    return out;
  }
  // Light grey (0) to green (1).
  function shareColor(share) {
    const r = Math.round(225 - 180 * share), g = Math.round(225 - 45 * share);
    const b = Math.round(225 - 140 * share);
    return 'rgb(' + r + ',' + g + ',' + b + ')';
  }
  // White (0) through orange to dark red (1).
  function heatColor(u) {
    const r = 255 - Math.round(90 * Math.max(0, u - 0.5) * 2);
    const g = Math.round(255 - 235 * u);
    const b = Math.round(255 - 255 * Math.min(1, u * 1.6));
    return [r, g, b];
  }

  // ---- Layout: device positions in [0, 1] x [0, 1], per topology family ----------------------
  function layout() {
    const n = topo.devices, npus = topo.npus, pos = [];
    const circle = (count, k) => {
      const a = -Math.PI / 2 + (2 * Math.PI * k) / count;
      return [0.5 + 0.45 * Math.cos(a), 0.5 + 0.45 * Math.sin(a)];
    };
    if (topo.family === 'ring') {
      for (let d = 0; d < n; ++d) pos.push(circle(n, d));
    } else if (topo.family === 'grid') {
      const w = topo.dims[0], h = topo.dims[1], layers = topo.dims[2] || 1;
      const across = w * layers + (layers - 1);
      for (let d = 0; d < n; ++d) {
        const x = d % w, y = Math.floor(d / w) % h, z = Math.floor(d / (w * h));
        pos.push([(x + z * (w + 1) + 0.5) / across, (y + 0.5) / h]);
      }
    } else if (topo.family === 'switch') {
      // Layers by distance from the NPUs (NPUs at the bottom, then leaves, spines...); a
      // switch sits above the middle of its neighbours in the layer below.
      const adj = Array.from({ length: n }, () => []);
      for (const [a, b] of topo.links) { adj[a].push(b); adj[b].push(a); }
      const layer = new Array(n).fill(-1);
      let frontier = [];
      for (let d = 0; d < npus; ++d) { layer[d] = 0; frontier.push(d); }
      while (frontier.length) {
        const next = [];
        for (const d of frontier)
          for (const e of adj[d])
            if (layer[e] < 0) { layer[e] = layer[d] + 1; next.push(e); }
        frontier = next;
      }
      const top = Math.max(0, ...layer);
      const rows = Array.from({ length: top + 1 }, () => []);
      for (let d = 0; d < n; ++d) rows[Math.max(0, layer[d])].push(d);
      const x = new Array(n).fill(0);
      rows.forEach((row, r) => {
        if (r > 0) {
          const key = (d) => {
            const below = adj[d].filter((e) => layer[e] === r - 1);
            return below.length ? below.reduce((s, e) => s + x[e], 0) / below.length : 0.5;
          };
          const keys = new Map(row.map((d) => [d, key(d)]));
          row.sort((a, b) => keys.get(a) - keys.get(b) || a - b);
        }
        row.forEach((d, k) => { x[d] = (k + 0.5) / row.length; });
      });
      for (let d = 0; d < n; ++d)
        pos.push([x[d], top === 0 ? 0.5 : 0.92 - (0.84 * Math.max(0, layer[d])) / top]);
    } else {
      // Force layout (Fruchterman-Reingold from a circle: deterministic) up to 300 devices.
      for (let d = 0; d < n; ++d) pos.push(circle(n, d));
      if (n <= 300) {
        const k = Math.sqrt(1 / n) * 0.6;
        for (let it = 0; it < 150; ++it) {
          const disp = pos.map(() => [0, 0]);
          for (let a = 0; a < n; ++a)
            for (let b = a + 1; b < n; ++b) {
              const dx = pos[a][0] - pos[b][0], dy = pos[a][1] - pos[b][1];
              const dist = Math.max(1e-4, Math.hypot(dx, dy)), f = (k * k) / dist;
              disp[a][0] += (dx / dist) * f; disp[a][1] += (dy / dist) * f;
              disp[b][0] -= (dx / dist) * f; disp[b][1] -= (dy / dist) * f;
            }
          for (const [a, b] of topo.links) {
            const dx = pos[a][0] - pos[b][0], dy = pos[a][1] - pos[b][1];
            const dist = Math.max(1e-4, Math.hypot(dx, dy)), f = (dist * dist) / k / 2;
            disp[a][0] -= (dx / dist) * f; disp[a][1] -= (dy / dist) * f;
            disp[b][0] += (dx / dist) * f; disp[b][1] += (dy / dist) * f;
          }
          const step = 0.05 * (1 - it / 150);
          for (let d = 0; d < n; ++d) {
            const len = Math.max(1e-9, Math.hypot(disp[d][0], disp[d][1]));
            pos[d][0] += (disp[d][0] / len) * Math.min(len, step);
            pos[d][1] += (disp[d][1] / len) * Math.min(len, step);
          }
        }
        const xs = pos.map((p) => p[0]), ys = pos.map((p) => p[1]);
        const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
        for (const p of pos) {
          p[0] = 0.05 + (0.9 * (p[0] - x0)) / Math.max(1e-9, x1 - x0);
          p[1] = 0.05 + (0.9 * (p[1] - y0)) / Math.max(1e-9, y1 - y0);
        }
      }
    }
    return pos;
  }
  const positions = layout();
  const WIDTH = 600;
  const HEIGHT = topo.family === 'grid'
    ? Math.round(WIDTH * Math.min(1.2, Math.max(0.25, topo.dims[1] /
        (topo.dims[0] * (topo.dims[2] || 1) + ((topo.dims[2] || 1) - 1)))))
    : topo.family === 'switch' ? 320 : WIDTH;
  const px = (d) => [positions[d][0] * WIDTH, positions[d][1] * HEIGHT];
  // Where a link is drawn: device to device, except a torus's wrap-around link, which would
  // cross its whole row or column: a stub from its sender out past the grid's edge.
  const cellX = topo.family === 'grid' ? WIDTH / (topo.dims[0] * (topo.dims[2] || 1) + ((topo.dims[2] || 1) - 1)) : 0;
  const cellY = topo.family === 'grid' ? HEIGHT / topo.dims[1] : 0;
  const linkGeometry = topo.links.map(([a, b]) => {
    const [x1, y1] = px(a), [x2, y2] = px(b);
    if (topo.family !== 'grid' || (Math.abs(x2 - x1) < 1.5 * cellX && Math.abs(y2 - y1) < 1.5 * cellY))
      return [x1, y1, x2, y2];
    const dx = Math.abs(x2 - x1) >= 1.5 * cellX ? -Math.sign(x2 - x1) * 0.45 * cellX : 0;
    const dy = Math.abs(y2 - y1) >= 1.5 * cellY ? -Math.sign(y2 - y1) * 0.45 * cellY : 0;
    return [x1, y1, x1 + dx, y1 + dy];
  });
  const nodeRadius = Math.max(2, Math.min(11, 220 / Math.sqrt(topo.devices) / 1.5));

  // ---- One panel per schedule -----------------------------------------------------------------
  function makePanel(s, index) {
    const p = { s: s, index: index, selected: null };
    const box = html('section', { class: 'panel', id: 'panel-' + index }, document.getElementById('panels'));
    html('h2', {}, box, (schedules.length > 1 ? 'ABCD'[index] + ': ' : '') + s.label);
    const total = html('div', { class: 'total', 'data-ps': String(s.time_ps) }, box,
      'collective time ' + micros(s.time_ps) + ', ' + s.transfers + ' messages, ' +
      s.collective + ' of ' + bytesText(s.size_bytes));
    p.total = total;
    if (!s.detail)
      html('div', { class: 'note' }, box, 'aggregated (more than a few thousand messages): ' +
        'link utilization per time bin of ' + micros(s.bin_ps));
    p.routes = s.pairs.map((pair) => pair[2]);
    if (s.detail) buildDetail(p, box); else buildAggregate(p, box);
    p.progress = html('canvas', { class: 'progress', width: String(Math.min(1200, Math.max(200, topo.npus * 4))), height: '40' }, box);
    return p;
  }

  function buildTopologySvg(p, box) {
    const svg = el('svg', { class: 'topology', viewBox: '-14 -14 ' + (WIDTH + 28) + ' ' + (HEIGHT + 28) }, box);
    p.linkEls = linkGeometry.map(([x1, y1, x2, y2], id) =>
      el('line', { class: 'link', 'data-link': String(id), x1: x1, y1: y1, x2: x2, y2: y2 }, svg));
    p.nodeEls = [];
    for (let d = 0; d < topo.devices; ++d) {
      const [x, y] = px(d);
      if (d < topo.npus) {
        p.nodeEls.push(el('circle', { class: 'npu', 'data-npu': String(d), cx: x, cy: y, r: nodeRadius }, svg));
      } else {
        el('rect', { class: 'switch', x: x - nodeRadius, y: y - nodeRadius * 0.7, width: 2 * nodeRadius, height: 1.4 * nodeRadius }, svg);
      }
      if (topo.devices <= 64) el('text', { class: 'label', x: x, y: y }, svg).textContent = String(d);
    }
    p.msgLayer = el('g', { class: 'messages' }, svg);
  }

  function buildDetail(p, box) {
    const s = p.s, tx = s.tx;
    buildTopologySvg(p, box);
    // Transfers by chunk, for the path highlight.
    p.byChunk = new Map();
    tx.chunks.forEach((list, i) => {
      for (const c of list) {
        if (!p.byChunk.has(c)) p.byChunk.set(c, []);
        p.byChunk.get(c).push(i);
      }
    });
    const lanes = s.pairs.length, laneH = 13, left = 60, width = 900;
    const gbox = html('div', { class: 'gantt-box' }, box);
    const g = el('svg', { class: 'gantt', width: '100%', viewBox: '0 0 ' + (left + width + 6) + ' ' + (lanes * laneH + 4) }, gbox);
    s.pairs.forEach(([a, b], lane) => {
      el('rect', { class: 'lane-bg', x: left, y: lane * laneH + 1, width: width, height: laneH - 2 }, g);
      el('text', { class: 'lane-label', x: left - 4, y: lane * laneH + laneH / 2 }, g).textContent = a + '\u2192' + b;
    });
    p.rects = tx.start.map((start, i) => {
      const x = left + (start / tMax) * width;
      const w = Math.max(0.5, ((tx.end[i] - start) / tMax) * width);
      return el('rect', {
        class: 'msg' + (tx.reduce[i] ? ' reduce' : ''), 'data-tx': String(i),
        x: x, y: tx.pair[i] * laneH + 2, width: w, height: laneH - 4,
      }, g);
    });
    p.cursor = el('line', { class: 'cursor', x1: left, x2: left, y1: 0, y2: lanes * laneH + 4 }, g);
    p.ganttLeft = left; p.ganttWidth = width;
    g.addEventListener('mousemove', (ev) => hoverTransfer(p, ev));
    g.addEventListener('mouseleave', hideTip);
    g.addEventListener('click', (ev) => clickTransfer(p, ev));
    p.msgLayer.addEventListener('mousemove', (ev) => hoverTransfer(p, ev));
    p.msgLayer.addEventListener('mouseleave', hideTip);
    p.msgLayer.addEventListener('click', (ev) => clickTransfer(p, ev));
    p.render = () => renderDetail(p);
  }

  function buildAggregate(p, box) {
    const s = p.s, lanes = s.pairs.length, bins = s.bins;
    p.util = decode(s.util);
    p.progressBytes = decode(s.progress);
    const topoCanvas = html('canvas', { class: 'topology', width: String(WIDTH + 28), height: String(HEIGHT + 28) }, box);
    p.topoCtx = topoCanvas.getContext('2d');
    // The heat map: a row per lane, a column per bin, scaled onto the page by the browser.
    const source = document.createElement('canvas');
    source.width = bins; source.height = lanes;
    const sctx = source.getContext('2d');
    const img = sctx.createImageData(bins, lanes);
    for (let lane = 0; lane < lanes; ++lane)
      for (let b = 0; b < bins; ++b) {
        const [r, g, bl] = heatColor(p.util[lane * bins + b] / 255), k = 4 * (lane * bins + b);
        img.data[k] = r; img.data[k + 1] = g; img.data[k + 2] = bl; img.data[k + 3] = 255;
      }
    sctx.putImageData(img, 0, 0);
    const heat = html('canvas', { class: 'heat', width: '900', height: String(Math.min(600, Math.max(60, lanes))) }, box);
    p.heat = heat; p.heatSource = source;
    heat.addEventListener('mousemove', (ev) => {
      const r = heat.getBoundingClientRect();
      const fx = (ev.clientX - r.left) / r.width, fy = (ev.clientY - r.top) / r.height;
      const t = fx * tMax, b = Math.floor(t / s.bin_ps), lane = Math.floor(fy * lanes);
      if (b < 0 || b >= bins || lane < 0 || lane >= lanes) return hideTip();
      const [a, c] = s.pairs[lane];
      showTip(ev, a + ' \u2192 ' + c + '\n' + micros(b * s.bin_ps) + ' .. ' + micros((b + 1) * s.bin_ps) +
        '\nbusy ' + Math.round((100 * p.util[lane * bins + b]) / 255) + '%');
    });
    heat.addEventListener('mouseleave', hideTip);
    p.render = () => renderAggregate(p);
  }

  // ---- Rendering at the slider's time -----------------------------------------------------------
  function pointOnRoute(route, f) {
    // Hops share the message's time equally (store-and-forward over equal hops).
    const hops = route.length, h = Math.min(hops - 1, Math.floor(f * hops)), g = f * hops - h;
    const [x1, y1, x2, y2] = linkGeometry[route[h]];
    return [x1 + (x2 - x1) * g, y1 + (y2 - y1) * g];
  }

  function npuShare(p, v, t) {
    const done = p.s.completions[v];
    if (!done.length) return 1;
    let lo = 0, hi = done.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (done[mid] <= t) lo = mid + 1; else hi = mid; }
    return lo / done.length;
  }

  function drawProgress(p, shareOf) {
    const c = p.progress, ctx = c.getContext('2d'), n = topo.npus, w = c.width / n;
    ctx.clearRect(0, 0, c.width, c.height);
    ctx.fillStyle = '#eee'; ctx.fillRect(0, 0, c.width, c.height);
    let complete = 0;
    for (let v = 0; v < n; ++v) {
      const share = shareOf(v);
      if (share >= 1) ++complete;
      ctx.fillStyle = shareColor(share);
      const h = Math.max(1, share * (c.height - 2));
      ctx.fillRect(v * w, c.height - h, Math.max(1, w - (w > 3 ? 1 : 0)), h);
    }
    p.progress.setAttribute('data-complete', String(complete));
    p.progress.title = complete + ' of ' + n + ' NPUs complete';
  }

  function renderDetail(p) {
    const t = view.now, tx = p.s.tx;
    while (p.msgLayer.firstChild) p.msgLayer.removeChild(p.msgLayer.firstChild);
    const r = Math.max(2, nodeRadius * 0.55);
    for (let i = 0; i < tx.start.length; ++i) {
      if (!(tx.start[i] <= t && t < tx.end[i])) continue;
      const [x, y] = pointOnRoute(p.routes[tx.pair[i]], (t - tx.start[i]) / (tx.end[i] - tx.start[i]));
      const sel = p.selected !== null && tx.chunks[i].includes(p.selected);
      el('circle', {
        class: 'msg inflight' + (tx.reduce[i] ? ' reduce' : '') + (sel ? ' chunk-sel' : ''),
        'data-tx': String(i), cx: x, cy: y, r: r,
      }, p.msgLayer);
    }
    for (let v = 0; v < topo.npus; ++v) p.nodeEls[v].setAttribute('fill', shareColor(npuShare(p, v, t)));
    const cx = p.ganttLeft + (t / tMax) * p.ganttWidth;
    p.cursor.setAttribute('x1', cx); p.cursor.setAttribute('x2', cx);
    drawProgress(p, (v) => npuShare(p, v, t));
  }

  function renderAggregate(p) {
    const s = p.s, t = view.now, bins = s.bins;
    const b = Math.min(bins - 1, Math.floor(t / s.bin_ps));
    const inTime = t < s.time_ps;
    const linkUtil = new Float32Array(topo.links.length);
    if (inTime)
      s.pairs.forEach((pair, lane) => {
        const u = p.util[lane * bins + b] / 255;
        for (const l of pair[2]) linkUtil[l] = Math.max(linkUtil[l], u);
      });
    const ctx = p.topoCtx;
    ctx.setTransform(1, 0, 0, 1, 14, 14);
    ctx.clearRect(-14, -14, WIDTH + 28, HEIGHT + 28);
    ctx.lineWidth = topo.devices > 256 ? 1.5 : 2.5;
    linkGeometry.forEach(([x1, y1, x2, y2], l) => {
      const [r, g, bl] = heatColor(linkUtil[l]);
      ctx.strokeStyle = linkUtil[l] > 0 ? 'rgb(' + r + ',' + g + ',' + bl + ')' : '#d8d8d8';
      ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x2, y2); ctx.stroke();
    });
    const share = (v) => (inTime ? p.progressBytes[v * bins + b] / 255 : 1);
    for (let d = 0; d < topo.devices; ++d) {
      const [x, y] = px(d);
      ctx.fillStyle = d < topo.npus ? shareColor(share(d)) : '#ddd';
      ctx.beginPath(); ctx.arc(x, y, nodeRadius, 0, 2 * Math.PI); ctx.fill();
    }
    const heat = p.heat, hctx = heat.getContext('2d');
    hctx.drawImage(p.heatSource, 0, 0, heat.width * (s.time_ps / tMax), heat.height);
    const cx = (t / tMax) * heat.width;
    hctx.fillStyle = '#000'; hctx.fillRect(Math.min(heat.width - 1, cx), 0, 1, heat.height);
    drawProgress(p, share);
    p.bin = b;
  }

  // ---- Hover and click ------------------------------------------------------------------------
  const tip = document.getElementById('tooltip');
  function showTip(ev, text) {
    tip.textContent = text; tip.hidden = false;
    tip.style.left = ev.clientX + 12 + 'px'; tip.style.top = ev.clientY + 12 + 'px';
  }
  function hideTip() { tip.hidden = true; }
  function transferOf(ev) {
    const a = ev.target.getAttribute && ev.target.getAttribute('data-tx');
    return a === null || a === undefined ? -1 : Number(a);
  }
  function hoverTransfer(p, ev) {
    const i = transferOf(ev);
    if (i < 0) return hideTip();
    const tx = p.s.tx, [a, b] = p.s.pairs[tx.pair[i]], list = tx.chunks[i];
    showTip(ev, 'message ' + i + ': ' + a + ' \u2192 ' + b + (tx.reduce[i] ? ' (reduce)' : '') +
      '\nchunk' + (list.length > 1 ? 's ' : ' ') + list.slice(0, 12).join(', ') + (list.length > 12 ? ', ...' : '') +
      ' (' + bytesText(list.length * p.s.chunk_bytes) + ')' +
      '\n' + micros(tx.start[i]) + ' .. ' + micros(tx.end[i]) + ', step ' + tx.step[i]);
  }
  function clickTransfer(p, ev) {
    const i = transferOf(ev);
    selectChunk(p, i < 0 ? null : p.s.tx.chunks[i][0]);
  }
  // Highlights the links every message carrying `chunk` crosses and those messages.
  function selectChunk(p, chunk) {
    if (!p.s.detail) return;
    p.selected = chunk;
    const on = new Set(), carrying = new Set(chunk === null ? [] : p.byChunk.get(chunk) || []);
    for (const i of carrying) for (const l of p.routes[p.s.tx.pair[i]]) on.add(l);
    p.linkEls.forEach((e, l) => e.classList.toggle('path', on.has(l)));
    p.rects.forEach((e, i) => e.classList.toggle('chunk-sel', carrying.has(i)));
    p.render();
  }

  // ---- Time ----------------------------------------------------------------------------------
  const slider = document.getElementById('slider'), clock = document.getElementById('clock');
  function setTime(t) {
    view.now = Math.max(0, Math.min(tMax, Math.round(t)));
    clock.textContent = micros(view.now) + ' of ' + micros(tMax);
    clock.setAttribute('data-ps', String(view.now));
    for (const p of view.panels) p.render();
    ++view.frames;
  }
  slider.addEventListener('input', () => {
    stop();
    setTime((Number(slider.value) / Number(slider.max)) * tMax);
  });
  const play = document.getElementById('play');
  let last = null, playing = false;
  function stop() { playing = false; play.textContent = 'Play'; }
  function frame(stamp) {
    if (!playing) return;
    if (last !== null) {
      const t = view.now + ((stamp - last) / 1000 / PLAY_SECONDS) * tMax;
      setTime(t);
      slider.value = String(Math.round((view.now / tMax) * Number(slider.max)));
      if (view.now >= tMax) { stop(); return; }
    }
    last = stamp;
    requestAnimationFrame(frame);
  }
  play.addEventListener('click', () => {
    if (playing) return stop();
    if (view.now >= tMax) setTime(0);
    playing = true; last = null; play.textContent = 'Pause';
    requestAnimationFrame(frame);
  });

  // ---- Page ----------------------------------------------------------------------------------
  document.getElementById('title').textContent = 'tacos view: ' + data.title;
  const summary = document.getElementById('summary');
  schedules.forEach((s, k) => html('span', { class: 'summary-total' }, summary,
    (schedules.length > 1 ? 'ABCD'[k] + ' ' : '') + s.label + ': ' + micros(s.time_ps)));
  if (schedules.length === 2) {
    const ratio = schedules[1].time_ps / Math.max(1, schedules[0].time_ps);
    html('span', { id: 'ratio', 'data-ratio': String(ratio) }, summary,
      'B / A = ' + ratio.toFixed(3) + 'x');
  }
  html('span', {}, summary, topo.name + ', ' + topo.npus + ' NPUs, tacos ' + data.version);
  view.panels = schedules.map(makePanel);
  setTime(0);
  view.ready = true;
})();
