package headless

// The checks the browser tests run in a loaded page, shared by the tests
// of coordinator/web and of the kinds' pages (kinds/verify): the
// accessibility basics and the numbers a page shows.

// A11yScript checks the basics of accessibility in the page and returns the
// problems: form fields without a label, buttons and links without a name,
// images and pictures (img, top-level svg) without a text alternative, text
// whose contrast with its background is under WCAG AA (4.5:1, or 3:1 for
// large text), and a page without a language, title or one h1. Contrast is
// computed from the computed colours, blending translucent backgrounds up
// the tree; text inside SVG pictures (chart labels, pieces) is left out.
const A11yScript = `(() => {
  const problems = [];
  const short = (el) => el.outerHTML.slice(0, 120);
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (el.type === 'hidden') continue;
    const byFor = el.id && document.querySelector('label[for="' + CSS.escape(el.id) + '"]');
    if (!(byFor || el.closest('label') || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby'))) {
      problems.push('form field without a label: ' + short(el));
    }
  }
  for (const b of document.querySelectorAll('button')) {
    if (!b.textContent.trim() && !b.getAttribute('aria-label')) problems.push('button without a name: ' + short(b));
  }
  for (const a of document.querySelectorAll('a[href]')) {
    if (!a.textContent.trim() && !a.getAttribute('aria-label')) problems.push('link without a name: ' + short(a));
  }
  for (const img of document.querySelectorAll('img')) {
    if (!img.hasAttribute('alt')) problems.push('image without alt text: ' + short(img));
  }
  for (const svg of document.querySelectorAll('svg')) {
    if (svg.parentElement.closest('svg') || svg.getAttribute('aria-hidden') === 'true') continue;
    const label = svg.getAttribute('aria-label') || (svg.getAttribute('aria-labelledby') || '').split(' ').map(id => {
      const e = document.getElementById(id); return e ? e.textContent : ''; }).join(' ').trim();
    if (svg.getAttribute('role') !== 'img' || !label) problems.push('picture without a text alternative: ' + short(svg));
  }
  if (!document.documentElement.lang) problems.push('the page has no language');
  if (!document.title.trim()) problems.push('the page has no title');
  if (document.querySelectorAll('h1').length !== 1) problems.push('the page has ' + document.querySelectorAll('h1').length + ' h1 headings');
  const rgba = (s) => { const m = /rgba?\(([^)]+)\)/.exec(s); if (!m) return null;
    const p = m[1].split(',').map(parseFloat); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const over = (c, bg) => [0, 1, 2].map(k => c[k] * c[3] + bg[k] * (1 - c[3]));
  const background = (el) => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    let bg = [255, 255, 255]; for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg); return bg; };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  let checked = 0;
  while (walker.nextNode()) {
    const node = walker.currentNode, el = node.parentElement;
    if (!node.nodeValue.trim() || !el || seen.has(el) || el.closest('svg')) continue;
    seen.add(el);
    const cs = getComputedStyle(el), r = el.getBoundingClientRect();
    if (cs.visibility === 'hidden' || cs.display === 'none' || r.width <= 1 || r.height <= 1 || r.right <= 0 || r.bottom <= 0) continue;
    if (el.closest('button[disabled]')) continue;
    const bg = background(el), fgc = rgba(cs.color), fg = over(fgc, bg);
    const l1 = lum(fg), l2 = lum(bg), ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight, 10) >= 700;
    const need = (size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5;
    checked++;
    if (ratio < need) problems.push('contrast ' + ratio.toFixed(2) + ' < ' + need + ' for "' + node.nodeValue.trim().slice(0, 40) + '" (' + cs.color + ' on rgb(' + bg.map(Math.round) + '))');
  }
  if (checked === 0) problems.push('no text was checked');
  return problems;
})()`

// FieldsScript collects the data-field values of the elements under a
// selector: the numbers a page shows, keyed by field.
const FieldsScript = `(sel) => { const out = {}; const root = document.querySelector(sel);
  if (!root) return null;
  for (const e of root.querySelectorAll('[data-field]')) {
    out[e.dataset.field] = (e.dataset.value || e.textContent).replace(/[\u202f\s]+/g, ' ').trim(); }
  return out; }`
