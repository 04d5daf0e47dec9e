// Copy buttons: a button with data-copy="ID" copies the text of element
// ID (a result block) to the clipboard. Listening on the document, not on
// each button, keeps buttons working after a live update replaces them.
(function () {
  "use strict";
  document.addEventListener("click", function (e) {
    var button = e.target.closest ? e.target.closest("button[data-copy]") : null;
    if (!button) {
      return;
    }
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) {
      return;
    }
    navigator.clipboard.writeText(source.textContent).then(function () {
      button.textContent = "Copied";
      button.setAttribute("data-copied", "1");
    }, function () {
      button.textContent = "Copy failed: select the text";
    });
  });
})();
