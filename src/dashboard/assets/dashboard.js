// The Tessera dashboard: fetches /ui/api/... for the section on show, every few seconds, and
// renders it with DOM calls only (text is never parsed as HTML). No libraries; the charts are SVG
// drawn here.
'use strict';

const REFRESH_MS = 5000;
const NODE_PAGE = 120;
const SVG = 'http://www.w3.org/2000/svg';
// Distinct colours for queues on the GPU map; grey for pods Tessera does not schedule.
const PALETTE = [
  '#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#ff7f0e', '#393b79',
  '#637939', '#843c39'
];
const OTHER_COLOUR = '#7f7f7f';

const view = {
  section: 'overview',
  nodeOffset: 0,
  nodeMatch: '',
  workloadMatch: '',
  timer: null
};

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === 'text')
      node.textContent = value;
    else if (key === 'className')
      node.className = value;
    // Through the CSSOM: the page's Content-Security-Policy refuses inline style attributes.
    else if (key === 'style')
      node.style.cssText = value;
    else
      node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function gpus(value) {
  return Number.isInteger(value) ? String(value) : value.toFixed(value < 10 ? 2 : 1);
}

function plural(count, word) {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function clock(unixSeconds) {
  return new Date(unixSeconds * 1000).toLocaleTimeString();
}

function untilText(unixSeconds, now) {
  const minutes = Math.round((unixSeconds - now) / 60);
  if (minutes < 1) return 'within a minute';
  if (minutes < 90) return `in ~${minutes} min`;
  return `in ~${(minutes / 60).toFixed(1)} h`;
}

// With --dashboard-auth kubernetes the data needs the user's own token: asked for once, kept in
// this tab's sessionStorage (gone when the tab closes) and sent with every data request.
const TOKEN_KEY = 'tessera-dashboard-token';

function storedToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

class SignInNeeded extends Error {}

async function fetchJson(path) {
  const headers = {Accept: 'application/json'};
  const token = storedToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, {headers, credentials: 'same-origin'});
  if (!response.ok) {
    const message = (await response.text()).trim();
    // 401: no token or one the API server does not know; 403 with a token: its user may not look.
    // The first ask, before any token was given, needs no error text: the form says what to do.
    if (response.status === 401 || (response.status === 403 && token)) throw new SignInNeeded(token ? message : '');
    throw new Error(`${response.status}: ${message}`);
  }
  return response.json();
}

function askForToken(message) {
  document.getElementById('sign-in').hidden = false;
  document.getElementById('sign-in-error').textContent = message;
  document.getElementById('sign-in-token').focus();
}

function showCycle(data) {
  const status = document.getElementById('cycle');
  status.textContent = data.cycle ? `As of the cycle at ${clock(data.cycleAt)}` : 'Waiting for the first cycle…';
}

function fillRows(tbody, rows) {
  tbody.replaceChildren(...rows);
}

// Overview -----------------------------------------------------------------------------------

function renderOverview(data) {
  const figures = [
    ['Nodes', String(data.nodes)],
    ['GPUs', gpus(data.gpus)],
    ['GPUs allocated', `${gpus(data.allocated)} (${data.gpus ? Math.round((100 * data.allocated) / data.gpus) : 0}%)`],
    ['Fragmented free GPUs', gpus(data.fragmented)],
    ['Running workloads', String(data.running)],
    ['Pending workloads', String(data.pending)],
    ['Recent evictions', String(data.evictions)],
  ];
  document.getElementById('overview-figures')
      .replaceChildren(
          ...figures.map(([name, value]) => el('div', {}, el('dt', {text: name}), el('dd', {text: value}))));
  const free = Math.max(0, data.gpus - data.allocated - data.fragmented);
  const parts = [
    ['allocated', data.allocated, '#0b5cad'],
    ['fragmented (free, too small for the usual pod shapes)', data.fragmented, '#b35900'], ['free', free, '#eef1f4']
  ];
  const bar = el('div', {
    className: 'bar',
    role: 'img',
    'aria-label': `${gpus(data.allocated)} of ${gpus(data.gpus)} GPUs allocated, ${
        gpus(data.fragmented)} free but fragmented, ${gpus(free)} free`
  });
  for (const [, amount, colour] of parts) {
    if (data.gpus > 0 && amount > 0)
      bar.append(el('span', {style: `width:${(100 * amount) / data.gpus}%;background:${colour}`}));
  }
  const legend =
      el('ul', {className: 'legend'},
         ...parts.map(
             ([name, amount, colour]) =>
                 el('li', {}, el('span', {className: 'swatch', style: `background:${colour}`, 'aria-hidden': 'true'}),
                    `${name}: ${gpus(amount)}`)));
  document.getElementById('allocation-bar').replaceChildren(bar, legend);
  const reasons = Object.entries(data.pendingByReason);
  fillRows(
      document.querySelector('#pending-reasons tbody'),
      reasons.length ?
          reasons.map(
              ([reason, count]) =>
                  el('tr', {}, el('td', {text: reason}), el('td', {className: 'number', text: String(count)}))) :
          [el('tr', {}, el('td', {text: 'Nothing is pending', colspan: '2'}))]);
}

// Queues -------------------------------------------------------------------------------------

function historyChart(queue) {
  const samples = queue.history;
  const width = 192, height = 40;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'history');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('role', 'img');
  const last = samples[samples.length - 1];
  const label = samples.length ?
      `Queue ${queue.name}: ${plural(samples.length, 'sample')} since ${clock(samples[0][0])}; allocation ` +
          `${gpus(Math.min(...samples.map((s) => s[1])))} to ${
              gpus(Math.max(...samples.map((s) => s[1])))} GPUs, now ` +
          `${gpus(last[1])}; fair share now ${gpus(last[2])}` :
      `Queue ${queue.name}: no samples yet`;
  svg.setAttribute('aria-label', label);
  const title = document.createElementNS(SVG, 'title');
  title.textContent = label;
  svg.append(title);
  if (samples.length === 0) return svg;
  const top = Math.max(1, ...samples.map((s) => Math.max(s[1], s[2])));
  const t0 = samples[0][0], span = Math.max(1, last[0] - t0);
  const line = (column, dashed, colour) => {
    const path = document.createElementNS(SVG, 'polyline');
    path.setAttribute(
        'points',
        samples
            .map(
                (s) => `${(((s[0] - t0) / span) * (width - 2) + 1).toFixed(1)},${
                    (height - 1 - (s[column] / top) * (height - 2)).toFixed(1)}`)
            .join(' '));
    path.setAttribute('fill', 'none');
    path.setAttribute('stroke', colour);
    path.setAttribute('stroke-width', '2');
    if (dashed) path.setAttribute('stroke-dasharray', '4 3');
    svg.append(path);
  };
  line(2, true, '#b35900');
  line(1, false, '#0b5cad');
  return svg;
}

function renderQueues(data) {
  fillRows(
      document.querySelector('#queue-table tbody'),
      data.queues.map(
          (queue) => el(
              'tr', {}, el('th', {scope: 'row', style: `padding-left:${0.6 + queue.depth * 1.2}rem`, text: queue.name}),
              el('td', {className: 'number', text: gpus(queue.deserved)}),
              el('td', {className: 'number', text: gpus(queue.fairShare)}),
              el('td', {className: 'number', text: gpus(queue.allocated)}),
              el('td', {className: 'number', text: queue.limit === null ? 'none' : gpus(queue.limit)}),
              el('td', {className: 'number', text: gpus(queue.requested)}),
              el('td', {className: 'number', text: String(queue.running)}),
              el('td', {className: 'number', text: String(queue.pending)}), el('td', {}, historyChart(queue)))));
}

// Nodes --------------------------------------------------------------------------------------

function queueColour(index) {
  return index < 0 ? OTHER_COLOUR : PALETTE[index % PALETTE.length];
}

function deviceCell(queues, cell, index) {
  const parts = [];
  let used = 0;
  for (let i = 0; i < cell.length; i += 2) {
    parts.push([cell[i], cell[i + 1]]);
    used += cell[i + 1];
  }
  const words = parts.map(
      ([queue, milli]) => `${gpus(milli / 1000)} ${queue < 0 ? 'other schedulers\' pods' : `queue ${queues[queue]}`}`);
  if (used < 1000) words.push(`${gpus((1000 - used) / 1000)} free`);
  const gpu = el('div', {
    className: 'gpu',
    role: 'img',
    'aria-label': `GPU ${index}: ${words.join(', ')}`,
    title: `GPU ${index}: ${words.join(', ')}`
  });
  for (const [queue, milli] of parts) {
    gpu.append(el('span', {style: `height:${Math.min(100, milli / 10)}%;background:${queueColour(queue)}`}));
  }
  return gpu;
}

function renderNodes(data) {
  const [name, model, pool, schedulable, fragmented, devices] = [0, 1, 2, 3, 4, 5];
  const first = data.matched ? data.offset + 1 : 0;
  document.getElementById('node-count').textContent =
      `Nodes ${first}–${data.offset + data.rows.length} of ${data.matched}` +
      (data.matched !== data.total ? ` matching (${data.total} in all)` : '');
  const used = new Set();
  for (const row of data.rows)
    for (const cell of row[devices])
      for (let i = 0; i < cell.length; i += 2) used.add(cell[i]);
  document.getElementById('node-legend')
      .replaceChildren(
          ...[...used]
              .sort((a, b) => a - b)
              .map(
                  (queue) =>
                      el('li', {},
                         el('span',
                            {className: 'swatch', style: `background:${queueColour(queue)}`, 'aria-hidden': 'true'}),
                         queue < 0 ? 'other schedulers' : data.queues[queue])));
  document.getElementById('node-map').replaceChildren(...data.rows.map((row) => {
    const detail = [row[model] || 'no GPUs', row[pool]];
    if (!row[schedulable]) detail.push('cordoned');
    if (row[fragmented] > 0) detail.push(`${gpus(row[fragmented])} GPUs fragmented`);
    return el(
        'article', {className: 'node', 'aria-label': `Node ${row[name]}`}, el('h4', {text: row[name]}),
        el('p', {text: detail.join(' · ')}),
        el('div', {className: 'devices'}, ...row[devices].map((cell, index) => deviceCell(data.queues, cell, index))));
  }));
  document.getElementById('nodes-previous').disabled = data.offset === 0;
  document.getElementById('nodes-next').disabled = data.offset + data.rows.length >= data.matched;
}

// Workloads ----------------------------------------------------------------------------------

function renderWorkloads(data) {
  const now = Date.now() / 1000;
  document.getElementById('pending-count').textContent = `${plural(data.matched, 'pending workload')}` +
      (data.matched > data.pending.length ? `, first ${data.pending.length} shown` : '');
  fillRows(
      document.querySelector('#pending-table tbody'),
      data.pending.length ?
          data.pending.map(
              (row) =>
                  el('tr', {}, el('th', {scope: 'row', text: row.workload}), el('td', {text: row.queue || '—'}),
                     el('td', {className: 'number', text: gpus(row.gpus)}),
                     el('td', {className: 'message'}, el('strong', {text: row.reason}), el('br'), row.message),
                     el('td', {className: 'message'}, row.estimatedStart === null ? 'no estimate' : el('strong', {
                          text: `${untilText(row.estimatedStart, now)} (${clock(row.estimatedStart)})`
                        }),
                        el('br'), row.estimate))) :
          [el('tr', {}, el('td', {colspan: '5', text: 'Nothing is pending'}))]);
  fillRows(
      document.querySelector('#eviction-table tbody'),
      data.evictions.length ?
          data.evictions.map(
              (row) => el(
                  'tr', {}, el('td', {text: clock(row.at)}), el('th', {scope: 'row', text: row.workload}),
                  el('td', {text: row.queue}),
                  el('td', {text: row.madeRoomFor ? `${row.action} to make room for ${row.madeRoomFor}` : row.action}),
                  el('td', {className: 'number', text: String(row.pods)}),
                  el('td', {className: 'number', text: gpus(row.gpus)}))) :
                                                    [el('tr', {}, el('td', {colspan: '6', text: 'No evictions since the scheduler started'}))]);
}

// Sections -----------------------------------------------------------------------------------

const SECTIONS = {
  overview: () => fetchJson('/ui/api/overview').then((data) => {
    showCycle(data);
    renderOverview(data);
  }),
  queues: () => fetchJson('/ui/api/queues').then((data) => {
    showCycle(data);
    renderQueues(data);
  }),
  nodes: () =>
      fetchJson(
          `/ui/api/nodes?offset=${view.nodeOffset}&limit=${NODE_PAGE}&match=${encodeURIComponent(view.nodeMatch)}`)
          .then((data) => {
            showCycle(data);
            renderNodes(data);
          }),
  workloads: () =>
      fetchJson(`/ui/api/workloads?limit=200&match=${encodeURIComponent(view.workloadMatch)}`).then((data) => {
        showCycle(data);
        renderWorkloads(data);
      }),
};

function refresh() {
  clearTimeout(view.timer);
  const section = view.section;
  SECTIONS[section]()
      .then(() => {
        document.getElementById('sign-in').hidden = true;
        document.body.setAttribute('data-loaded', section);
        view.timer = setTimeout(refresh, REFRESH_MS);
      })
      .catch((error) => {
        if (error instanceof SignInNeeded) {
          // No polling until a token is given: each try would only be refused again.
          askForToken(error.message);
          return;
        }
        document.getElementById('cycle').textContent = `Cannot load ${section}: ${error.message}`;
        view.timer = setTimeout(refresh, REFRESH_MS);
      });
}

function show(section) {
  if (!(section in SECTIONS)) section = 'overview';
  view.section = section;
  document.body.removeAttribute('data-loaded');
  for (const button of document.querySelectorAll('nav button[data-section]')) {
    if (button.dataset.section === section)
      button.setAttribute('aria-current', 'page');
    else
      button.removeAttribute('aria-current');
  }
  for (const name of Object.keys(SECTIONS)) document.getElementById(name).hidden = name !== section;
  if (location.hash !== `#${section}`) history.replaceState(null, '', `#${section}`);
  refresh();
}

document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('nav button[data-section]')) {
    button.addEventListener('click', () => show(button.dataset.section));
  }
  document.getElementById('sign-in').addEventListener('submit', (event) => {
    event.preventDefault();
    const field = document.getElementById('sign-in-token');
    try {
      sessionStorage.setItem(TOKEN_KEY, field.value.trim());
    } catch {
      document.getElementById('sign-in-error').textContent = 'This browser keeps no session storage for the token.';
      return;
    }
    field.value = '';
    document.getElementById('sign-in-error').textContent = 'Checking the token…';
    refresh();
  });
  document.getElementById('node-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    view.nodeMatch = document.getElementById('node-match').value.trim();
    view.nodeOffset = 0;
    refresh();
  });
  document.getElementById('workload-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    view.workloadMatch = document.getElementById('workload-match').value.trim();
    refresh();
  });
  document.getElementById('nodes-previous').addEventListener('click', () => {
    view.nodeOffset = Math.max(0, view.nodeOffset - NODE_PAGE);
    refresh();
  });
  document.getElementById('nodes-next').addEventListener('click', () => {
    view.nodeOffset += NODE_PAGE;
    refresh();
  });
  show(location.hash.slice(1));
});
