/* overlap-lab: every iframe of an overlap-lab page on this page takes the height its page reports.
   Included by its address (a static copy's embed.js), it believes only pages of the copy it
   came from; inlined (the live lab's Embed snippet), a frame's own pages, by its src's origin. */
(function () {
  if (window.overlapLabFrames) return;
  window.overlapLabFrames = true;
  var script = document.currentScript;
  var own = script && script.src ? new URL(script.src, location.href).origin : "";
  addEventListener("message", function (e) {
    var d = e.data;
    if (!d || d.type !== "overlap-lab:height" || typeof d.height !== "number" || !(d.height > 0)) return;
    if (own && e.origin !== own) return;
    var frames = document.getElementsByTagName("iframe");
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      if (f.contentWindow !== e.source) continue;
      if (new URL(f.src, location.href).origin === e.origin) f.style.height = Math.ceil(d.height) + "px";
      return;
    }
  });
})();
