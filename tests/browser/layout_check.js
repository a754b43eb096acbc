(function () {
  const R = e => e.getBoundingClientRect();
  const overlap = (a, b, tol) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > tol &&
                                 Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > tol;
  const visible = r => r.width > 0.5 && r.height > 0.5;
  const desc = e => (e.id ? '#' + e.id : e.tagName.toLowerCase()) + ' "' + (e.textContent || '').trim().slice(0, 40) + '"';
  const out = {height: document.documentElement.scrollHeight, viewport: window.innerWidth,
               scroll_width: document.documentElement.scrollWidth, figures: [], page: []};
  const sum = document.querySelector('section#summary');
  out.summary = sum ? sum.innerText : null;
  document.querySelectorAll('details').forEach(d => { d.open = true; });   // lay everything out, then check
  out.height_open = document.documentElement.scrollHeight;
  document.querySelectorAll('figure').forEach(fig => {
    const svg = fig.querySelector('svg');
    const f = {id: fig.id, svg: !!svg, texts: 0, legends: 0, axes: 0, overlaps: []};
    out.figures.push(f);
    if (!svg) return;
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() && visible(R(t)));
    f.texts = texts.length;
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (overlap(R(texts[i]), R(texts[j]), 1)) f.overlaps.push('text ' + desc(texts[i]) + ' x text ' + desc(texts[j]));
    const legends = [...svg.querySelectorAll('g[id*="-legend_"]')];
    f.legends = legends.length;
    const axes = [...svg.querySelectorAll('g[id*="-axes_"]')].map(g => g.querySelector('g[id*="-patch_"]')).filter(Boolean);
    f.axes = axes.length;
    legends.forEach(lg => {
      const lr = R(lg);
      axes.forEach(ax => { if (overlap(lr, R(ax), 1)) f.overlaps.push('legend ' + lg.id + ' x axes ' + ax.id); });
      texts.filter(t => !lg.contains(t)).forEach(t => { if (overlap(lr, R(t), 1)) f.overlaps.push('legend ' + lg.id + ' x text ' + desc(t)); });
    });
    const box = R(svg);
    texts.forEach(t => { const r = R(t);
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
        f.overlaps.push('text outside the figure ' + desc(t)); });
    const fr = R(svg), cap = fig.querySelector('figcaption');
    if (cap && overlap(fr, R(cap), 1)) f.overlaps.push('svg x figcaption');
    if (fr.right > R(fig).right + 1) f.overlaps.push('svg wider than its figure');
  });
  const parents = [document.querySelector('main'), ...document.querySelectorAll('section, details, figure, nav')];
  parents.forEach(p => {
    const kids = [...p.children].filter(k => visible(R(k)));
    for (let i = 0; i < kids.length; i++)
      for (let j = i + 1; j < kids.length; j++)
        if (overlap(R(kids[i]), R(kids[j]), 1)) out.page.push(desc(kids[i]) + ' x ' + desc(kids[j]));
  });
  const pre = document.createElement('pre');
  pre.id = 'metaeval-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
