// chuhe's embed script: put a live board in a page with one tag.
//
//   <script src="https://chuhe.example/embed.js" data-game="12" data-lang="zh" async></script>
//   <script src="https://chuhe.example/embed.js" data-league="3" data-round="2" data-table="1"
//           data-width="100%" data-height="720" async></script>
//
// The script inserts an <iframe> of /embed/… from the same server right where the tag is.
(function () {
  var s = document.currentScript;
  if (!s) return;
  var base = new URL(s.src, location.href).origin;
  var d = s.dataset;
  var path = d.game
    ? '/embed/game/' + encodeURIComponent(d.game)
    : '/embed/league/' + encodeURIComponent(d.league || '') + '/match/' + encodeURIComponent(d.round || '1') + '/' + encodeURIComponent(d.table || '1');
  var f = document.createElement('iframe');
  f.src = base + path + (d.lang ? '?lang=' + encodeURIComponent(d.lang) : '');
  f.title = d.title || 'chuhe 楚河';
  f.loading = 'lazy';
  f.style.border = '0';
  f.style.width = d.width || '100%';
  f.style.height = d.height || (d.game ? '560px' : '720px');
  f.setAttribute('allow', 'fullscreen');
  s.parentNode.insertBefore(f, s.nextSibling);
})();
