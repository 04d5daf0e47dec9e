// Notifications of followed jobs. For a signed-in user the layout has
// <aside id="notices" data-events="/me/events" data-user=NAME
// data-poll=MS>: this script asks that URL for the user's events after the
// last one dismissed, lists them in the aside (shown once there is one),
// and shows each new one as a browser notification when the user allowed
// them (a button asks; a browser asks only on a click). What was
// dismissed and notified is kept per user in localStorage, so a reload
// does not notify again. Without this script nothing is lost: /follows
// lists the follows, the job pages show the results.
(function () {
  "use strict";
  var box = document.getElementById("notices");
  if (!box || !window.fetch) {
    return;
  }
  var url = box.getAttribute("data-events");
  var user = box.getAttribute("data-user") || "";
  var poll = parseInt(box.getAttribute("data-poll"), 10) || 15000;
  var list = document.getElementById("notices-list");
  var count = document.getElementById("notices-count");
  var enable = document.getElementById("notices-enable");
  var clear = document.getElementById("notices-clear");
  var keyDismissed = "arbiter-events-dismissed:" + user;
  var keyNotified = "arbiter-events-notified:" + user;
  function stored(key) {
    try {
      return parseInt(window.localStorage.getItem(key), 10) || 0;
    } catch (e) {
      return 0;
    }
  }
  function store(key, v) {
    try {
      window.localStorage.setItem(key, String(v));
    } catch (e) {
      // No storage: events are listed again after a reload.
    }
  }
  var dismissed = stored(keyDismissed);
  var notified = stored(keyNotified);
  var shown = {};
  var last = dismissed;
  function permission() {
    return window.Notification ? window.Notification.permission : "unsupported";
  }
  function showEnable() {
    enable.hidden = permission() !== "default";
  }
  function notify(e, li) {
    if (permission() !== "granted") {
      return;
    }
    try {
      var n = new window.Notification("Arbiter: " + e.title, { body: e.event + " · " + e.job, tag: "arbiter-" + e.id });
      n.onclick = function () {
        window.focus();
        window.location.href = e.url;
      };
      li.setAttribute("data-notified", "1");
    } catch (err) {
      // Some browsers notify from a service worker only: the list stays.
      li.setAttribute("data-notified", "0");
    }
  }
  function add(e) {
    if (shown[e.id]) {
      return;
    }
    shown[e.id] = true;
    var li = document.createElement("li");
    li.setAttribute("data-job", e.job);
    li.setAttribute("data-event", e.event);
    li.setAttribute("data-id", String(e.id));
    var a = document.createElement("a");
    a.href = e.url;
    a.textContent = e.title;
    li.appendChild(a);
    list.appendChild(li);
    if (e.id > notified) {
      notify(e, li);
    }
  }
  function render() {
    var n = list.children.length;
    count.textContent = String(n);
    box.hidden = n === 0;
    box.setAttribute("data-polls", String((parseInt(box.getAttribute("data-polls"), 10) || 0) + 1));
  }
  function tick() {
    window.fetch(url + "?after=" + last, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        return r.ok ? r.json() : { events: [] };
      })
      .then(function (d) {
        var evs = d.events || [];
        for (var i = 0; i < evs.length; i++) {
          add(evs[i]);
          last = Math.max(last, evs[i].id);
        }
        if (permission() === "granted" && last > notified) {
          notified = last;
          store(keyNotified, notified);
        }
        render();
      })
      .catch(function () {
        render();
      })
      .then(function () {
        window.setTimeout(tick, poll);
      });
  }
  enable.addEventListener("click", function () {
    window.Notification.requestPermission().then(showEnable);
  });
  clear.addEventListener("click", function () {
    dismissed = last;
    store(keyDismissed, dismissed);
    while (list.firstChild) {
      list.removeChild(list.firstChild);
    }
    render();
  });
  showEnable();
  tick();
})();
