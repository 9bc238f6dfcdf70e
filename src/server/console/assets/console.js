// askgate console: refreshes the pending list in place every two seconds. Everything else is a
// plain form, so the console works without this file.
(function () {
  "use strict";
  var target = document.getElementById("pending");
  if (!target) { return; }
  var url = target.getAttribute("data-refresh");
  function refresh() {
    var request = new XMLHttpRequest();
    request.open("GET", url);
    request.onload = function () {
      if (request.status === 200) {
        var focused = document.activeElement;
        var typing = focused && focused.tagName === "INPUT" && target.contains(focused);
        if (!typing) { target.innerHTML = request.responseText; }
      } else if (request.status === 401) {
        window.location = "/console/sign-in";
      }
    };
    request.send();
  }
  window.setInterval(refresh, 2000);
})();
