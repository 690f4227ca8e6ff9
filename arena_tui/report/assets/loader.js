// arena report.html: plotly.js and the run's data are in the page gzip-compressed and then
// base64-encoded (a third of the size of the plain text), in <script> elements of a type the
// browser does not run. This unpacks them with the browser's own DecompressionStream (no
// network, no library), runs plotly.js, then hands the data to report.js (arenaReport).
// A browser without DecompressionStream gets one clear line instead of a blank page.
(function () {
  "use strict";
  var note = document.getElementById("loading");

  function fail(text) {
    note.textContent = text;
    note.className = "failed";
  }

  if (typeof DecompressionStream === "undefined" || typeof Response === "undefined" ||
      typeof Blob === "undefined" || !Blob.prototype.stream) {
    fail("This browser cannot open the compressed report: use a current Chrome, Firefox " +
         "or Safari.");
    return;
  }

  function unpack(id) {
    var bin = atob(document.getElementById(id).textContent.trim());
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }

  Promise.all([unpack("plotly-gz"), unpack("run-data-gz")]).then(function (texts) {
    var s = document.createElement("script");
    s.textContent = texts[0];  // an inline script runs as it is inserted: Plotly is defined
    document.head.appendChild(s);
    if (typeof Plotly === "undefined") { throw new Error("plotly.js did not run"); }
    window.arenaReport(JSON.parse(texts[1]));
    note.remove();
  }).catch(function (err) {
    fail("The report's charts could not be drawn: " + err);
    console.error(err);
  });
})();
