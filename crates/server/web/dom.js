// A few DOM helpers.

/**
 * `h('button.primary', { onclick, 'aria-label': … }, 'text', child…)`: an element with
 * classes, attributes (functions for `on…` become listeners) and children.
 */
export function h(tag, attrs = {}, ...children) {
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name || 'div');
  if (classes.length) el.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** A polite live region for screen readers; `say(text)` announces. */
export function announcer() {
  const el = h('div.sr-only', { 'aria-live': 'polite', role: 'status', 'data-testid': 'announce' });
  return {
    el,
    say(text) {
      el.textContent = '';
      // A fresh text node is announced even when the text repeats.
      setTimeout(() => {
        el.textContent = text;
      }, 30);
    },
  };
}

/** A two-step button: the first click asks to confirm, the second does it. */
export function confirmButton(label, confirmLabel, cancelLabel, action, attrs = {}) {
  const wrap = h('span.confirm');
  const main = h('button', { type: 'button', ...attrs }, label);
  const yes = h('button.danger', { type: 'button', 'data-testid': `${attrs['data-testid'] || 'action'}-confirm` }, confirmLabel);
  const no = h('button', { type: 'button' }, cancelLabel);
  const reset = () => fill(wrap, main);
  main.addEventListener('click', () => fill(wrap, yes, no));
  yes.addEventListener('click', () => {
    reset();
    action();
  });
  no.addEventListener('click', reset);
  reset();
  return wrap;
}
