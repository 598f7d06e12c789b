// /docs: opens the operation the address names (#operationId), on load and when the address changes. The page is
// readable without it: every operation's summary is there, and a click opens it.
function openNamed() {
  var id = decodeURIComponent(location.hash.slice(1));
  var el = id && document.getElementById(id);
  if (el && el.tagName === 'DETAILS') {
    el.open = true;
    el.scrollIntoView();
  }
}
window.addEventListener('hashchange', openNamed);
openNamed();
