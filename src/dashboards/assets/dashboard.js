// Keeps a rendered dashboard current: fetches its data.json every refreshRate seconds and redraws the
// check list, and flips pages every paginationRate seconds. Text goes in through textContent only.
(function () {
  'use strict';
  var root = document.getElementById('dashboard');
  if (!root) return;
  var cfg = root.dataset;
  var perPage = Number(cfg.perPage) || 15;
  var paginate = cfg.paginate === 'true';
  var page = 0;
  var LABELS = { passing: 'Passing', degraded: 'Degraded', failing: 'Failing', unknown: 'No data' };
  var WINDOWS = [['24h', '24 hours'], ['7d', '7 days'], ['30d', '30 days']];

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }
  function pct(v) { return v === null ? '—' : (v >= 99.995 && v < 100 ? '99.99' : v.toFixed(2)) + ' %'; }
  function ms(v) { return v === null || v === undefined ? '—' : Math.round(v) + ' ms'; }
  function when(iso) { return iso.slice(0, 16).replace('T', ' ') + ' UTC'; }

  function figureRow(label, c, pick, fmt) {
    return el('tr', {}, [el('th', { scope: 'row', text: label })].concat(WINDOWS.map(function (w) { return el('td', { text: fmt(pick(c.windows[w[0]])) }); })));
  }

  function checkItem(c, index, open) {
    var summary = el('summary', {}, [
      el('span', { class: 'dot', 'aria-hidden': 'true' }),
      el('span', { class: 'check-name', text: c.name }),
      el('span', { class: 'check-status', text: LABELS[c.status] }),
      c.group ? el('span', { class: 'group', text: c.group }) : null,
      c.tags.length ? el('span', { class: 'tags' }, c.tags.map(function (t) { return el('span', { class: 'tag', text: t }); })) : null,
      el('span', { class: 'headline', text: pct(c.windows['24h'].availability) }),
    ]);
    var rows = [figureRow('Availability', c, function (w) { return w.availability; }, pct), figureRow('No data', c, function (w) { return w.noData; }, pct)];
    if (cfg.showP95 === 'true') rows.push(figureRow('p95', c, function (w) { return w.p95; }, ms));
    if (cfg.showP99 === 'true') rows.push(figureRow('p99', c, function (w) { return w.p99; }, ms));
    var table = el('table', { class: 'figures' }, [
      el('thead', {}, [el('tr', {}, [el('th')].concat(WINDOWS.map(function (w) { return el('th', { scope: 'col', text: w[1] }); })))]),
      el('tbody', {}, rows),
    ]);
    var runs = el('ol', { class: 'runs', 'aria-label': 'Recent runs' }, c.recentRuns.map(function (r) {
      var label = LABELS[r.status];
      var inner = cfg.runLinks === 'true' ? el('a', { href: cfg.runBase + '/' + c.id + '/' + r.id, text: label }) : document.createTextNode(label);
      return el('li', { class: 'run status-' + r.status, title: r.startedAt + ' · ' + r.location + ' · ' + ms(r.responseTime) }, [inner]);
    }));
    var details = el('details', open ? { open: '' } : {}, [summary, table, el('div', { class: 'chart' }, [chart(c)]), runs]);
    return el('li', { class: 'check status-' + c.status, 'data-check-id': c.id, 'data-page': String(Math.floor(index / perPage)) }, [details]);
  }

  // The recent runs' response times as a line, as the server draws it (src/dashboards/chart.ts).
  function chart(c) {
    var NS = 'http://www.w3.org/2000/svg';
    var values = c.recentRuns.slice().reverse().map(function (r) { return typeof r.responseTime === 'number' ? r.responseTime : null; });
    var known = values.filter(function (v) { return v !== null; });
    if (!known.length) return null;
    var w = 240, h = 48, pad = 2, max = Math.max.apply(null, known.concat([1]));
    var x = function (i) { return values.length === 1 ? w / 2 : pad + (i * (w - 2 * pad)) / (values.length - 1); };
    var y = function (v) { return h - pad - (v / max) * (h - 2 * pad); };
    var d = '', drawing = false;
    values.forEach(function (v, i) {
      if (v === null) { drawing = false; return; }
      d += (drawing ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(v).toFixed(1);
      drawing = true;
    });
    var svg = document.createElementNS(NS, 'svg');
    var label = c.name + ': response time of recent runs: up to ' + Math.round(max) + ' ms';
    [['class', 'rt-chart'], ['viewBox', '0 0 ' + w + ' ' + h], ['width', w], ['height', h], ['role', 'img'], ['aria-label', label], ['preserveAspectRatio', 'none']].forEach(function (a) { svg.setAttribute(a[0], String(a[1])); });
    var title = document.createElementNS(NS, 'title');
    title.textContent = label;
    var path = document.createElementNS(NS, 'path');
    [['d', d], ['fill', 'none'], ['stroke', 'currentColor'], ['stroke-width', '1.5'], ['stroke-linejoin', 'round']].forEach(function (a) { path.setAttribute(a[0], a[1]); });
    svg.appendChild(title);
    svg.appendChild(path);
    return svg;
  }

  function pages() { return Math.max(1, Math.ceil(document.querySelectorAll('#checks > .check').length / perPage)); }

  function showPage() {
    var count = pages();
    if (page >= count) page = 0;
    document.querySelectorAll('#checks > .check').forEach(function (li) {
      li.hidden = paginate && Number(li.dataset.page) !== page;
    });
    var pager = document.getElementById('pager');
    if (pager) {
      pager.hidden = !paginate || count < 2;
      document.getElementById('page-number').textContent = String(page + 1);
      document.getElementById('page-count').textContent = String(count);
    }
  }

  function overall(checks) {
    var failing = checks.filter(function (c) { return c.status === 'failing'; }).length;
    var degraded = checks.filter(function (c) { return c.status === 'degraded'; }).length;
    if (!checks.length) return ['unknown', 'No checks'];
    if (failing) return ['failing', failing + ' of ' + checks.length + ' checks failing'];
    if (degraded) return ['degraded', degraded + ' of ' + checks.length + ' checks degraded'];
    if (checks.every(function (c) { return c.status === 'unknown'; })) return ['unknown', 'No results yet'];
    return ['passing', 'All checks passing'];
  }

  function draw(view) {
    var list = document.getElementById('checks');
    var openIds = {};
    list.querySelectorAll('.check').forEach(function (li) {
      if (li.querySelector('details').open) openIds[li.dataset.checkId] = true;
    });
    var items = view.checks.map(function (c, i) { return checkItem(c, i, cfg.expand === 'true' || openIds[c.id]); });
    list.replaceChildren.apply(list, items);
    var o = overall(view.checks);
    var badge = document.getElementById('overall');
    if (badge) { badge.className = 'overall status-' + o[0]; badge.textContent = o[1]; }
    var incidents = document.getElementById('incidents');
    if (incidents && view.incidents) {
      var ul = incidents.querySelector('ul');
      var lis = view.incidents.map(function (i) {
        var at = i.resolvedAt || i.openedAt;
        return el('li', { class: 'incident ' + (i.resolvedAt ? 'resolved' : 'open') }, [
          el('strong', { text: i.name }),
          document.createTextNode(' · ' + i.checkName + ' · ' + (i.resolvedAt ? 'resolved' : 'ongoing since') + ' '),
          el('time', { datetime: at, text: when(at) }),
        ]);
      });
      if (!lis.length) lis.push(el('li', { class: 'incident none', text: 'No incidents in the last 7 days.' }));
      ul.replaceChildren.apply(ul, lis);
    }
    var updated = document.getElementById('updated');
    updated.setAttribute('datetime', view.generatedAt);
    updated.textContent = when(view.generatedAt);
    showPage();
  }

  function refresh() {
    fetch(cfg.dataUrl, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (res) { if (!res.ok) throw new Error(String(res.status)); return res.json(); })
      .then(draw)
      .catch(function () { /* keep showing the last data; the next refresh tries again */ });
  }

  showPage();
  setInterval(refresh, (Number(cfg.refreshRate) || 60) * 1000);
  if (paginate) {
    setInterval(function () { page = (page + 1) % pages(); showPage(); }, (Number(cfg.paginationRate) || 60) * 1000);
  }
  window.dashboardRefresh = refresh;
})();
