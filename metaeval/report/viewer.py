"""The transcript viewer: one self-contained, offline HTML page per cell (``cells/<cell>/transcripts.html``).

Rendered from the study's ``cells/<cell>/transcript_view.json`` (:mod:`metaeval.study.transcript_view`: the judge's
transcript records joined with the human labels); like Inspect's log viewer, but one static file:

* a list of the judge's units (one per judge call unit: a topic's nugget creation or importance, an answer's
  assignment), filterable by topic, run, stage, judge label, human label and disagreement (judge label differs from
  the human one), and by free text;
* for the selected unit: the answer text (an assignment unit; offline judges send no prompt, so this is where their
  labels can be checked), the prompt (rendered messages) and the raw reply side by side, every re-ask as its own
  pair, and the items with the parsed judge label beside the human label and importance, disagreements marked;
  a unit is one batch of an answer's nuggets, so a topic and run with more nuggets than a batch are listed once per
  batch ("batch 1/2").

The data sit in the page as JSON (``<script type="application/json">``, every ``<`` written ``\\u003c``) and the
script puts every text in the page with ``textContent``, never as HTML, so an answer or a reply cannot inject
markup.  The filters
read the URL fragment on load (``#qid=Q&run=R&disagree=1&unit=N``), which is how the report's disagreement rows
link to the unit behind them.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any, Mapping
from urllib.parse import quote

CSS = """
*{box-sizing:border-box}
body{font-family:-apple-system,"Segoe UI",Roboto,Arial,sans-serif;margin:0;color:#222;background:#fff;font-size:14px}
header{padding:.6em 1em;border-bottom:2px solid #1f77b4;background:#f4f7fb}
header h1{font-size:1.15em;margin:0 0 .4em}
#filters{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:center}
#filters label{font-size:.9em;color:#333}
#filters select,#filters input{margin-left:.3em;font-size:.95em;max-width:16em}
#count{font-weight:600;color:#114a7a}
#layout{display:flex;height:calc(100vh - 6.5em)}
#list{width:24em;min-width:16em;overflow-y:auto;border-right:1px solid #ddd;margin:0;padding:0;list-style:none}
#list li{padding:.35em .7em;border-bottom:1px solid #eee;cursor:pointer;line-height:1.3}
#list li:hover{background:#f0f5fb}#list li.sel{background:#dbe9f8}
#list .meta{color:#666;font-size:.85em}
#detail{flex:1;overflow-y:auto;padding:.6em 1.2em}
.badge{display:inline-block;padding:0 .4em;border-radius:3px;font-size:.8em;margin-left:.3em;color:#fff;background:#999}
.badge.dis{background:#d62728}.badge.fail{background:#7a4a00}.badge.stage{background:#1f77b4}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em;margin:.6em 0}
.pair h3{font-size:.95em;margin:.2em 0}
pre{white-space:pre-wrap;overflow-wrap:break-word;background:#f6f6f6;border:1px solid #e3e3e3;padding:.6em;margin:0;
    max-height:32em;overflow-y:auto;font-size:.85em}
.msg{margin-bottom:.5em}.role{font-weight:600;color:#555;font-size:.85em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #d5d5d5;padding:.25em .5em;vertical-align:top;text-align:left}
th{background:#eef2f7}
td.lab{white-space:nowrap}
tr.dis td{background:#fdeaea}
p.note{color:#7a4a00;background:#fff7e6;border-left:3px solid #f0a500;padding:.3em .7em}
"""

SCRIPT = r"""
(function(){
const V = JSON.parse(document.getElementById('view-data').textContent);
const $ = id => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; };
const F = {qid: $('f-qid'), run: $('f-run'), stage: $('f-stage'), label: $('f-label'), human: $('f-human'), disagree: $('f-disagree'), text: $('f-text')};
function fill(sel, values, all) {
  sel.appendChild(el('option', all)).value = '';
  [...new Set(values)].filter(v => v !== null && v !== undefined && v !== '').sort().forEach(v => { const o = el('option', v); o.value = v; sel.appendChild(o); });
}
fill(F.qid, V.units.map(u => u.qid), 'all topics');
fill(F.run, V.units.map(u => u.run_id), 'all runs');
fill(F.stage, V.units.map(u => u.stage), 'all stages');
fill(F.label, V.units.flatMap(u => u.rows.map(r => r.judge)), 'any judge label');
fill(F.human, V.units.flatMap(u => u.rows.map(r => r.human)), 'any human label');
let selected = null;
function matches(u) {
  if (F.qid.value && u.qid !== F.qid.value) return false;
  if (F.run.value && u.run_id !== F.run.value) return false;
  if (F.stage.value && u.stage !== F.stage.value) return false;
  if (F.label.value && !u.rows.some(r => r.judge === F.label.value)) return false;
  if (F.human.value && !u.rows.some(r => r.human === F.human.value)) return false;
  if (F.disagree.value === '1' && !u.disagree) return false;
  if (F.disagree.value === '0' && u.disagree) return false;
  const q = F.text.value.trim().toLowerCase();
  if (q && !JSON.stringify([u.query, u.rows, u.outputs, u.calls.map(c => c.raw_reply)]).toLowerCase().includes(q)) return false;
  return true;
}
function render() {
  const list = $('list'); list.textContent = '';
  const shown = V.units.filter(matches);
  $('count').textContent = shown.length + ' of ' + V.units.length + ' units';
  shown.forEach(u => {
    const li = el('li'); li.dataset.unit = u.id;
    li.appendChild(el('span', 'topic ' + u.qid + (u.run_id ? ' / ' + u.run_id : '') + (u.batches > 1 ? ' (batch ' + u.batch + '/' + u.batches + ')' : '')));
    li.appendChild(el('span', u.stage, 'badge stage'));
    if (u.disagree) li.appendChild(el('span', 'disagrees', 'badge dis'));
    if (u.status && u.status !== 'ok') li.appendChild(el('span', u.status, 'badge fail'));
    const n = u.rows.filter(r => r.human !== null && r.judge !== r.human).length;
    li.appendChild(el('div', u.rows.length + ' item(s)' + (n ? ', ' + n + ' differ from the human label' : '') + (u.calls.length ? ', ' + u.calls.length + ' call(s)' : ', no model call'), 'meta'));
    li.onclick = () => show(u.id);
    if (u.id === selected) li.classList.add('sel');
    list.appendChild(li);
  });
  if (!shown.some(u => u.id === selected)) show(shown.length ? shown[0].id : null);
}
function show(id) {
  selected = id;
  document.querySelectorAll('#list li').forEach(li => li.classList.toggle('sel', Number(li.dataset.unit) === id));
  const d = $('detail'); d.textContent = '';
  if (id === null) { d.appendChild(el('p', 'No unit matches these filters.', 'note')); return; }
  const u = V.units[id];
  d.appendChild(el('h2', 'Topic ' + u.qid + (u.run_id ? ', run ' + u.run_id : '') + ' (' + u.stage + ')'));
  if (u.batches > 1) d.appendChild(el('p', 'Batch ' + u.batch + ' of ' + u.batches + ' of this ' + (u.run_id ? 'answer' : 'topic') +
    ': the judge takes ' + (V.batch_size ? 'up to ' + V.batch_size + ' ' : '') + 'nuggets per unit, so a topic and run appear once per batch.', 'meta'));
  if (u.query) d.appendChild(el('p', 'Query: ' + u.query));
  if (u.answer) { d.appendChild(el('h3', 'Answer')); d.appendChild(el('pre', u.answer, 'answer')); }
  if (u.status && u.status !== 'ok') d.appendChild(el('p', 'Status ' + u.status + (u.reason ? ': ' + u.reason : ''), 'note'));
  const t = el('table'); t.id = 'items';
  const hr = el('tr'); ['#', 'item', 'judge label (parsed)', 'human label', 'importance'].forEach(h => hr.appendChild(el('th', h)));
  t.appendChild(hr);
  u.rows.forEach((r, i) => {
    const tr = el('tr'); if (r.human !== null && r.judge !== r.human) tr.className = 'dis';
    [i + 1, r.item, r.judge === null ? '-' : r.judge, r.human === null ? '-' : r.human, r.importance === null ? '-' : r.importance]
      .forEach((x, j) => tr.appendChild(el('td', x, j >= 2 ? 'lab' : '')));
    t.appendChild(tr);
  });
  d.appendChild(el('h3', 'Items and labels'));
  if (!V.has_reference) d.appendChild(el('p', 'No human labels in this study.', 'note'));
  else if (u.stage === 'assign' && u.rows.length && u.rows.every(r => r.human === null))
    d.appendChild(el('p', 'No human label for these items: the judge labelled its own nuggets (no human nugget has this text), so nothing is paired.', 'note'));
  d.appendChild(t);
  if (u.outputs && u.outputs.length) {
    d.appendChild(el('h3', 'Output of this unit'));
    const ol = el('ol'); u.outputs.forEach(x => ol.appendChild(el('li', x))); d.appendChild(ol);
  }
  if (!u.calls.length) d.appendChild(el('p', 'This judge made no model call for this unit (an offline judge): there is no prompt or reply to show' +
    (u.answer ? '; the answer it labelled is above.' : '.'), 'note'));
  u.calls.forEach((c, i) => {
    const head = 'Call ' + (i + 1) + (c.reask ? ' (re-ask ' + c.reask + ')' : '') + ': ' + (c.prompt_id ? c.prompt_id + '@' + c.prompt_version : '') +
      (c.model ? ', model ' + c.model : '') + (c.latency_s != null ? ', ' + Number(c.latency_s).toFixed(2) + ' s' : '') +
      (c.input_tokens != null ? ', ' + c.input_tokens + ' + ' + c.output_tokens + ' tokens' : '') + (c.error ? ', error: ' + c.error : '');
    d.appendChild(el('h3', head));
    const pair = el('div', null, 'pair');
    const left = el('div'); left.appendChild(el('h3', 'Prompt'));
    const lp = el('pre'); lp.className = 'prompt';
    (c.messages || []).forEach(m => { const b = el('div', null, 'msg'); b.appendChild(el('div', m.role, 'role')); b.appendChild(el('div', m.content)); lp.appendChild(b); });
    left.appendChild(lp);
    const right = el('div'); right.appendChild(el('h3', 'Raw reply'));
    right.appendChild(el('pre', c.raw_reply === null || c.raw_reply === undefined ? '(no reply)' : c.raw_reply, 'reply'));
    pair.appendChild(left); pair.appendChild(right); d.appendChild(pair);
  });
}
Object.values(F).forEach(f => f.addEventListener(f.tagName === 'INPUT' ? 'input' : 'change', render));
const params = new URLSearchParams(location.hash.slice(1));
[['qid', 'qid'], ['run', 'run'], ['stage', 'stage'], ['label', 'label'], ['human', 'human'], ['disagree', 'disagree']].forEach(([k, f]) => {
  if (params.has(k)) F[f].value = params.get(k);
});
if (params.has('unit')) selected = Number(params.get('unit'));
render();
if (params.has('unit') && V.units[Number(params.get('unit'))]) show(Number(params.get('unit')));
})();
"""


def viewer_html(view: Mapping[str, Any], title: str, text: str | None = None) -> str:
    """The viewer page of one cell's ``transcript_view.json`` document ``view``.  ``text``: the JSON text ``view``
    was parsed from (the file's), embedded as it is instead of encoding ``view`` again (a grid's views are
    megabytes each; the study writes them with every ``<`` already as ``\\u003c``).  Either way no ``<`` reaches
    the page inside the data (in valid JSON it can only occur inside a string, where ``\\u003c`` is the same
    character), so no tag can open or close there."""
    data = (text.strip() if text is not None else json.dumps(view, ensure_ascii=False, allow_nan=False))
    data = data.replace("<", "\\u003c")
    counts = (f"{view.get('n_units', 0)} judge units, {view.get('n_disagree', 0)} with a label that differs from the "
              "human one" if view.get("has_reference") else f"{view.get('n_units', 0)} judge units, no human labels")
    if view.get("batch_size"):  # one unit per judge call: an answer with more nuggets than a batch has several
        counts += (f"; a unit is one batch of up to {view['batch_size']} nuggets, so a topic and run with more "
                   "nuggets appear once per batch")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<header><h1>{escape(title)}</h1><div id=\"filters\">"
            "<label>topic<select id=\"f-qid\"></select></label><label>run<select id=\"f-run\"></select></label>"
            "<label>stage<select id=\"f-stage\"></select></label>"
            "<label>judge label<select id=\"f-label\"></select></label>"
            "<label>human label<select id=\"f-human\"></select></label>"
            "<label>disagreement<select id=\"f-disagree\"><option value=\"\">all units</option>"
            "<option value=\"1\">judge differs from human</option><option value=\"0\">judge agrees</option>"
            "</select></label><label>text<input id=\"f-text\" type=\"search\" placeholder=\"nugget, query, reply\">"
            f"</label><span id=\"count\"></span><span class=\"meta\">{escape(counts)}</span></div></header>"
            "<div id=\"layout\"><ul id=\"list\"></ul><div id=\"detail\"></div></div>"
            f"<script type=\"application/json\" id=\"view-data\">{data}</script><script>{SCRIPT}</script>"
            "</body></html>\n")


def unit_link(page: str, qid: Any, run_id: Any = None, *, disagree: bool = False) -> str:
    """The viewer URL (relative to the report) filtered to one topic (and run), optionally to disagreements."""
    frag = f"qid={quote(str(qid), safe='')}"
    if run_id is not None:
        frag += f"&run={quote(str(run_id), safe='')}"
    if disagree:
        frag += "&disagree=1"
    return f"{page}#{frag}"
