// Live updates of an Arbiter page: the server sends the page's live region
// again whenever it changes (server-sent events on the page's own URL with
// ?live=1, named in <body data-live>). Without this script the page is
// complete as served; a reload shows the same.
(function () {
  "use strict";
  var url = document.body.getAttribute("data-live");
  var region = document.getElementById("live");
  var status = document.getElementById("live-status");
  if (!url || !region || !window.EventSource) {
    return;
  }
  var updates = 0;
  var source = new EventSource(url);
  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }
  source.addEventListener("open", function () {
    say("live");
  });
  source.addEventListener("update", function (e) {
    updates++;
    region.innerHTML = e.data;
    document.body.setAttribute("data-updates", String(updates));
    say("live, updated " + new Date().toLocaleTimeString());
  });
  source.addEventListener("end", function () {
    source.close();
    say("finished: no more updates");
  });
  source.addEventListener("error", function () {
    if (source.readyState === EventSource.CONNECTING) {
      say("reconnecting…");
    }
  });
})();
