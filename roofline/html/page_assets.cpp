#include "page_assets.hpp"

namespace cfr::html {

std::string_view page_style() {
  return R"css(
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1b1b;--muted:#5a5a5a;--line:#d0d0d0;
--head:#f2f2f2;--sel:#fff1a8;--ok:#1a7f37;--bad:#c62828;--warn:#8a5a00}
@media (prefers-color-scheme: dark){:root{--bg:#16181c;--fg:#e6e6e6;--muted:#a8a8a8;
--line:#3a3d44;--head:#23262c;--sel:#5a4b00;--ok:#4cc36b;--bad:#ff7b7b;--warn:#e3b341}}
body{margin:0 auto;max-width:1400px;padding:1rem 1.5rem;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
h1{font-size:1.45rem;margin:.2rem 0}
h2{font-size:1.2rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1rem;margin:1.2rem 0 .4rem}
.made,figcaption,caption{color:var(--muted)}
caption{text-align:left;padding:.3rem 0}
#script-status[data-state=ok]{display:none}
#script-status[data-state=error],#selftest[data-state=failed]{color:var(--bad);font-weight:bold}
#selftest[data-state=not-run]{display:none}
figure.chart{position:relative;margin:0}
figure.chart svg{display:block;width:100%;height:auto;background:#fff;border-radius:6px}
.point,.model-point{cursor:pointer}
.point:focus,.model-point:focus,.point.selected,.model-point.selected{outline:none;stroke:#000;
stroke-width:4}
#tip{position:absolute;z-index:2;max-width:24rem;background:var(--bg);color:var(--fg);
border:1px solid var(--line);border-radius:4px;padding:.4rem .6rem;font-size:12px;
box-shadow:0 2px 8px rgba(0,0,0,.3);pointer-events:none}
#tip dl{display:grid;grid-template-columns:auto 1fr;gap:0 .6rem;margin:.3rem 0 0}
#tip dt{color:var(--muted)}
#tip dd{margin:0}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:12.5px}
th,td{border:1px solid var(--line);padding:.15rem .4rem;text-align:left;white-space:nowrap}
thead th{background:var(--head)}
th button{all:unset;cursor:pointer}
th button:focus-visible,tr:focus{outline:2px solid var(--fg);outline-offset:-2px}
th[aria-sort=ascending] button::after{content:" \25B2"}
th[aria-sort=descending] button::after{content:" \25BC"}
tr[data-point]{cursor:pointer}
tr.selected td{background:var(--sel)}
tr[data-status=failed] td,tr[data-status=SLOWER] td,tr[data-status=FAILED] td{color:var(--bad)}
tr[data-status=FASTER] td{color:var(--ok)}
tr[data-status=AMBIGUOUS] td{color:var(--warn)}
tr[data-status=skipped] td{color:var(--muted)}
dl.provenance{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem}
dl.provenance dt{color:var(--muted)}
dl.provenance dd{margin:0;overflow-wrap:anywhere}
dl.provenance ul{margin:0;padding-left:1.1rem}
.auditable-yes,.audit-verdict[data-consistent=true]{color:var(--ok)}
.auditable-no,.audit-verdict[data-consistent=false]{color:var(--bad)}
.finding.note strong{color:var(--muted)}
.finding strong{color:var(--bad)}
pre.legend{white-space:pre-wrap;font-size:12px}
)css";
}

std::string_view page_script() {
  return R"js(
(function () {
  'use strict';
  var statusBox = document.getElementById('script-status');
  var problems = [];
  function problem(error) {
    problems.push(String(error && error.message ? error.message : error));
    statusBox.textContent = 'Script error: ' + problems.join('; ');
    statusBox.setAttribute('data-state', 'error');
  }
  window.addEventListener('error', function (event) { problem(event.message); });
  function guarded(handler) {
    return function (event) {
      try { handler.call(this, event); } catch (error) { problem(error); }
    };
  }

  var figure = document.getElementById('chart');
  var tip = document.getElementById('tip');
  var chosen = [];

  function rowOf(point) {
    return document.getElementById('row-' + point.getAttribute('data-row'));
  }
  function pointOf(row) {
    return document.getElementById('point-' + row.getAttribute('data-row'));
  }

  // The row's figures: its table's headers beside its cells.
  function figures(row) {
    var headers = row.closest('table').tHead.rows[0].cells;
    var pairs = [];
    for (var i = 0; i < row.cells.length; i++) {
      pairs.push([headers[i].getAttribute('data-label'), row.cells[i].textContent]);
    }
    return pairs;
  }

  function showTip(point) {
    tip.textContent = '';
    var heading = document.createElement('strong');
    heading.textContent = point.getAttribute('aria-label');
    tip.appendChild(heading);
    var row = rowOf(point);
    if (row) {
      var list = document.createElement('dl');
      figures(row).forEach(function (pair) {
        var term = document.createElement('dt');
        term.textContent = pair[0];
        var value = document.createElement('dd');
        value.textContent = pair[1];
        list.appendChild(term);
        list.appendChild(value);
      });
      tip.appendChild(list);
    }
    tip.setAttribute('data-row', point.getAttribute('data-row'));
    tip.hidden = false;
    var box = point.getBoundingClientRect();
    var frame = figure.getBoundingClientRect();
    var left = box.right - frame.left + 10;
    if (left + tip.offsetWidth > frame.width) {
      left = Math.max(0, box.left - frame.left - tip.offsetWidth - 10);
    }
    tip.style.left = left + 'px';
    tip.style.top = Math.max(0, box.top - frame.top - 10) + 'px';
  }
  function hideTip() { tip.hidden = true; }

  function select(point) {
    chosen.forEach(function (element) {
      element.classList.remove('selected');
      if (element.tagName === 'TR') element.setAttribute('aria-selected', 'false');
    });
    var row = rowOf(point);
    chosen = row ? [point, row] : [point];
    point.classList.add('selected');
    if (row) {
      row.classList.add('selected');
      row.setAttribute('aria-selected', 'true');
      var details = row.closest('details');
      if (details) details.open = true;
    }
    return row;
  }

  function activates(event) { return event.key === 'Enter' || event.key === ' '; }

  function linkPoint(point) {
    var id = point.getAttribute('data-row');
    var title = point.querySelector('title');
    point.id = 'point-' + id;
    point.setAttribute('tabindex', '0');
    point.setAttribute('role', 'button');
    point.setAttribute('aria-label', title ? title.textContent : id);
    var row = rowOf(point);
    if (row) {
      point.setAttribute('aria-controls', row.id);
      row.setAttribute('data-point', point.id);
      row.setAttribute('tabindex', '0');
      row.setAttribute('aria-selected', 'false');
    }
    point.addEventListener('mouseenter', guarded(function () { showTip(point); }));
    point.addEventListener('focus', guarded(function () { showTip(point); }));
    point.addEventListener('mouseleave', guarded(hideTip));
    point.addEventListener('blur', guarded(hideTip));
    point.addEventListener('click', guarded(function () {
      var selectedRow = select(point);
      if (selectedRow) selectedRow.scrollIntoView({block: 'nearest'});
    }));
    point.addEventListener('keydown', guarded(function (event) {
      if (!activates(event)) return;
      event.preventDefault();
      var selectedRow = select(point);
      if (selectedRow) selectedRow.focus();
    }));
  }

  function linkRow(row) {
    row.addEventListener('click', guarded(function () { select(pointOf(row)); }));
    row.addEventListener('keydown', guarded(function (event) {
      if (!activates(event)) return;
      event.preventDefault();
      var point = pointOf(row);
      select(point);
      point.focus();
    }));
  }

  // A number where the cell starts with one ("12 -3thr" sorts as 12); "-"
  // (absent) below every number.
  function sortKey(text) {
    var number = parseFloat(text);
    return isNaN(number) ? null : number;
  }
  function sortBy(table, column) {
    var header = table.tHead.rows[0].cells[column];
    var ascending = header.getAttribute('aria-sort') !== 'ascending';
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) {
      cell.removeAttribute('aria-sort');
    });
    header.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var keyed = Array.prototype.map.call(body.rows, function (row, index) {
      var text = row.cells[column].textContent;
      return {row: row, index: index, text: text, number: sortKey(text)};
    });
    var numeric = keyed.every(function (k) { return k.number !== null || k.text === '-'; });
    keyed.sort(function (a, b) {
      var order;
      if (numeric) {
        order = (a.number === null ? -Infinity : a.number) - (b.number === null ? -Infinity : b.number);
        if (isNaN(order)) order = 0;
      } else {
        order = a.text.localeCompare(b.text);
      }
      return (ascending ? order : -order) || a.index - b.index;
    });
    keyed.forEach(function (k) { body.appendChild(k.row); });
  }

  function linkHeaders(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
      header.querySelector('button').addEventListener('click', guarded(function () {
        sortBy(table, column);
      }));
    });
  }

  // The chart's labels as the browser draws them, with its fonts: no box over
  // another (the plot places them from estimated boxes, label_placer.hpp) by
  // more than a pixel, what rounding a scaled font's ascent and descent to
  // whole pixels can add.
  function overlappingLabels() {
    var boxes = Array.prototype.map.call(figure.querySelectorAll('.plot-area text'), function (t) {
      return {text: t.textContent, box: t.getBoundingClientRect()};
    });
    var found = [];
    boxes.forEach(function (a, i) {
      boxes.slice(i + 1).forEach(function (b) {
        var apart = a.box.right - 1 <= b.box.left || b.box.right - 1 <= a.box.left ||
                    a.box.bottom - 1 <= b.box.top || b.box.bottom - 1 <= a.box.top;
        if (!apart) found.push('labels "' + a.text + '" and "' + b.text + '" overlap');
      });
    });
    return found;
  }

  // Every text of the chart (the legend too) inside the chart's canvas.
  function textsOutside() {
    var svg = figure.querySelector('svg');
    if (!svg) return [];
    var canvas = svg.getBoundingClientRect();
    return Array.prototype.filter.call(svg.querySelectorAll('text'), function (t) {
      var box = t.getBoundingClientRect();
      return box.left < canvas.left - 0.5 || box.right > canvas.right + 0.5 ||
             box.top < canvas.top - 0.5 || box.bottom > canvas.bottom + 0.5;
    }).map(function (t) { return '"' + t.textContent + '" lies outside the chart'; });
  }

  // No label over another nor outside the chart; every point selected by a
  // click and by Enter on its row, its figures shown on focus; a table sorted
  // both ways by N.
  function selfTest(points) {
    var failures = overlappingLabels().concat(textsOutside());
    points.forEach(function (point) {
      var row = rowOf(point);
      if (!row) { failures.push(point.id + ' has no row'); return; }
      point.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      var selectedRows = document.querySelectorAll('tr.selected');
      if (selectedRows.length !== 1 || selectedRows[0] !== row) {
        failures.push('a click on ' + point.id + ' did not select ' + row.id);
      }
      point.focus();
      if (tip.hidden || tip.getAttribute('data-row') !== point.getAttribute('data-row')) {
        failures.push('focus on ' + point.id + ' did not show its figures');
      }
      row.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
      if (!point.classList.contains('selected') || document.activeElement !== point) {
        failures.push('Enter on ' + row.id + ' did not select and focus ' + point.id);
      }
    });
    var table = document.querySelector('table.sortable');
    var header = table ? table.querySelector('th[data-label="N"]') : null;
    if (header) {
      [1, -1].forEach(function (direction) {
        header.querySelector('button').click();
        var values = Array.prototype.map.call(table.tBodies[0].rows, function (row) {
          return parseFloat(row.cells[header.cellIndex].textContent);
        });
        for (var i = 1; i < values.length; i++) {
          if ((values[i] - values[i - 1]) * direction < 0) {
            failures.push('sorting by N ' + (direction > 0 ? 'up' : 'down') + ' left ' +
                          values[i - 1] + ' before ' + values[i]);
            break;
          }
        }
      });
    }
    var out = document.getElementById('selftest');
    out.setAttribute('data-points', String(points.length));
    out.setAttribute('data-state', failures.length ? 'failed' : 'passed');
    out.textContent = failures.length ? 'Self-test failed: ' + failures.join('; ')
                                      : 'Self-test passed: ' + points.length +
                                        ' points, each selecting its row';
  }

  try {
    var points = Array.prototype.slice.call(figure.querySelectorAll('.point, .model-point'));
    points.forEach(linkPoint);
    document.querySelectorAll('tr[data-point]').forEach(linkRow);
    document.querySelectorAll('table.sortable').forEach(linkHeaders);
    statusBox.textContent = '';
    statusBox.setAttribute('data-state', 'ok');
    if (location.hash === '#selftest') selfTest(points);
  } catch (error) {
    problem(error);
  }
})();
)js";
}

}  // namespace cfr::html
